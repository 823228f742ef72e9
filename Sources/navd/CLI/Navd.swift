import ArgumentParser

/// The `navd` command: the daemon and its tools.
@main
struct Navd: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "navd",
        abstract: "A navigation server for thin clients: sessions, deep-link paths, lifecycle events.",
        version: version,
        subcommands: [ServeCommand.self, ValidateCommand.self, PathCommand.self, HealthCommand.self, StoreCommand.self],
        defaultSubcommand: nil
    )
}
