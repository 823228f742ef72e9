import ArgumentParser
import Logging
import NavWire

/// Runs the `navd` command line (the binary's `main`, in `Sources/navd`).
public func runNavd() {
    Navd.run(Array(CommandLine.arguments.dropFirst()))
}

/// Runs the `navd` command line with another swift-log backend: `navd serve` logs through the
/// handlers `logHandler` makes (one per label; `--log-level` still sets their level), in place of
/// its own line handler, so a program that links the `NavDaemon` product can send navd's records
/// wherever its backend does (`--log-format` then has no effect).
public func runNavd(logHandler: @escaping @Sendable (_ label: String) -> any LogHandler) {
    Log.backend = logHandler
    Navd.run(Array(CommandLine.arguments.dropFirst()))
}

/// The `navd` command: the daemon and its tools.
struct Navd: ParsableCommand {
    static let version = NavdVersion.text

    static let configuration = CommandConfiguration(
        commandName: "navd",
        abstract: "A navigation server for thin clients: sessions, deep-link paths, lifecycle events.",
        version: version,
        subcommands: [
            ServeCommand.self, ValidateCommand.self, PathCommand.self, GraphCommand.self, HealthCommand.self, StoreCommand.self,
            SessionCommand.self, ToursCommand.self, ReplayCommand.self, RecordCommand.self, FeedCommand.self, CheckCommand.self
        ],
        defaultSubcommand: nil
    )
}

extension Navd {
    /// ArgumentParser's `main`, except that a usage error of `navd check` exits with the status
    /// its help promises (``CheckCommand/usageStatus``), as its own checks of the arguments do.
    static func run(_ arguments: [String]) {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            if arguments.first == CheckCommand.configuration.commandName, exitCode(for: error) == .validationFailure {
                StandardStream.error.write(line: fullMessage(for: error))
                exit(withError: ExitCode(CheckCommand.usageStatus))
            }
            exit(withError: error)
        }
    }
}
