import ArgumentParser

/// Runs the `navd` command line (the binary's `main`, in `Sources/NavdEntry`).
public func runNavd() {
    Navd.main()
}

/// The `navd` command: the daemon and its tools.
struct Navd: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "navd",
        abstract: "A navigation server for thin clients: sessions, deep-link paths, lifecycle events.",
        version: version,
        subcommands: [
            ServeCommand.self, ValidateCommand.self, PathCommand.self, GraphCommand.self, HealthCommand.self, StoreCommand.self,
            SessionCommand.self, ToursCommand.self, ReplayCommand.self,
        ],
        defaultSubcommand: nil
    )
}
