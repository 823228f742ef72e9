import ArgumentParser
import NavCore
import NavSessions
import NavStoreSQLite

/// `navd store check|repair`: look at an SQLite store that navd refused to start on, and accept
/// the loss of what is damaged, explicitly.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Inspect or repair an SQLite store (while no navd is running on it: one in use exits 75).",
        subcommands: [Check.self, Repair.self]
    )

    /// The `--store` option both subcommands take.
    struct StoreOption: ParsableArguments {
        @Option(help: "sqlite:PATH, as given to navd serve. (NAVD_STORE; default sqlite:./.navd/navd.db)")
        var store: String?

        /// The database path.
        func path() throws -> String {
            let spec = store ?? Environment.current["NAVD_STORE"].flatMap { $0.isEmpty ? nil : $0 } ?? ServeSettings.defaultStore
            guard let options = try StoreFactory.SQLiteOptions(spec) else {
                throw ValidationError("navd store works on SQLite stores (sqlite:PATH), not '\(spec)'")
            }
            return options.path
        }
    }

    /// Runs `body`; a store in use (a navd running on it, by any name of the file) is said on
    /// standard error and exits 75, as `navd serve` does: it is not damage, and nothing is touched.
    static func refusingInUse(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as StoreError where error.kind == .inUse {
            StandardStream.error.write(Array("navd store: \(error.message)\n".utf8))
            throw ExitCode(ServeCommand.inUseExitStatus)
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the database (PRAGMA integrity_check) and every change log record; exit 1 if anything is damaged.",
            discussion:
                "Reports every change log file with its records, every run of bytes that are not records, and every place where acknowledged changes are missing. Changes nothing. A store in use (a navd running on it, by any name of the file) is not read: exit 75."
        )

        @OptionGroup var options: StoreOption

        func run() throws {
            let path = try options.path()
            try StoreCommand.refusingInUse {
                let (lines, damaged) = try SQLiteStore.inspect(path: path)
                for line in lines { print(line) }
                if damaged { throw ExitCode(1) }
            }
        }
    }

    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fold what is valid of a damaged change log into the database and set the damaged files aside.",
            discussion:
                "Each session keeps its changes up to the first one that is missing; its later ones are dropped, so its versions and events stay gapless. Prints every change and session lost; damaged files are renamed to FILE.damaged. A change log folder the database records but that is gone for good is given up for one next to the file. A damaged database cannot be repaired here: restore it from a backup. A store in use (a navd running on it) is not touched: exit 75."
        )

        @OptionGroup var options: StoreOption

        @Flag(help: "Required: accept losing the changes that are damaged (and, per session, those after them).")
        var acceptLoss = false

        func run() throws {
            let path = try options.path()
            guard acceptLoss else {
                throw ValidationError("repairing drops the damaged changes for good: run `navd store check` first, then pass --accept-loss")
            }
            try StoreCommand.refusingInUse {
                let store = try SQLiteStore(path: path, acceptingLoss: true) { _, name, version throws(StoreError) in
                    throw StoreError(message: "graph '\(name)' version \(version): the repair reads no sessions")
                }
                for line in store.recoveryReport { print(line) }
                store.close()
                print(
                    store.recoveryReport.isEmpty
                        ? "\(path): nothing was damaged; the change log is folded in" : "\(path): repaired; navd can start on it")
            }
        }
    }
}
