import Logging
import NavCore
import NavJSON
import NavSessions
import NavSnapshot
import NavStorePostgres
import NavStoreSQLite

/// Opens the store named by `--store` and keeps uploaded graphs in it where it can.
package enum StoreFactory {
    package struct SpecError: Error, CustomStringConvertible {
        package var description: String
    }

    package static func open(
        _ spec: String, graphs: GraphRegistry, connections: Int, notifies: Bool = true, cacheBytes: Int = SQLiteStore.defaultCacheBytes,
        answerLogBytes: Int = SQLiteStore.defaultAnswerBytesPerGeneration, logger: Logger
    ) throws -> any SessionStore {
        if spec == "memory" { return MemoryStore() }
        if let options = try SQLiteOptions(spec) {
            return try SQLiteStore(
                path: options.path, synchronousFull: options.synchronousFull, compactionThreshold: options.compaction,
                // Kept answers in the log (a generation's, until folded) stay a part of the budget of
                // kept answers: the daemon passes a quarter of it.
                answerBytesPerGeneration: answerLogBytes, cacheBytes: cacheBytes, checkDatabase: options.checkDatabase,
                decode: snapshotDecoder(graphs, readingThrough: false)
            )
        }
        if spec.hasPrefix("postgres://") || spec.hasPrefix("postgresql://") {
            return try PostgresStore(url: spec, connections: connections, notifies: notifies, decode: snapshotDecoder(graphs))
        }
        throw SpecError(description: "unknown --store '\(spec)': use memory, sqlite:PATH or postgres://user@host:port/db")
    }

    /// `sqlite:PATH[?sync=full|normal][&compact=N][&check=quick|off]`.
    package struct SQLiteOptions {
        package var path: String
        var synchronousFull = false
        var compaction = SQLiteStore.defaultCompactionThreshold
        /// `PRAGMA quick_check` at start-up (`check=off` skips it).
        var checkDatabase = true

        /// - Returns: nil when `spec` is not an SQLite store.
        package init?(_ spec: String) throws {
            guard spec.hasPrefix("sqlite:") else { return nil }
            path = String(spec.dropFirst("sqlite:".count))
            if let question = path.firstIndex(of: "?") {
                for option in path[path.index(after: question)...].split(separator: "&") {
                    switch option {
                    case "sync=full": synchronousFull = true
                    case "sync=normal": synchronousFull = false
                    case "check=quick": checkDatabase = true
                    case "check=off": checkDatabase = false
                    case _ where option.hasPrefix("compact="):
                        guard let changes = Int(option.dropFirst("compact=".count)), changes >= 1 else {
                            throw SpecError(description: "SQLite option '\(option)': compact= takes a number of changes, at least 1")
                        }
                        compaction = changes
                    default:
                        throw SpecError(
                            description:
                                "unknown SQLite option '\(option)': use sync=full, sync=normal, compact=CHANGES, check=quick or check=off"
                        )
                    }
                }
                path = String(path[..<question])
            }
            guard !path.isEmpty else { throw SpecError(description: "--store sqlite:PATH needs a path") }
        }
    }

    /// Restores snapshots against the graph version each session runs on.
    ///
    /// - Parameter readingThrough: whether a version missing here is read from the store: one
    ///   another process stored (PostgreSQL). Not for SQLite, which decodes holding its database
    ///   lock (a read-through would take it again: a crash) and whose versions are all restored at
    ///   start-up or added by this process, so a missing one is one that no longer loads.
    static func snapshotDecoder(_ graphs: GraphRegistry, readingThrough: Bool = true) -> SnapshotDecoder {
        { snapshot, name, created throws(StoreError) in
            let version = snapshot["graphVersion"]?.intValue ?? created
            guard let graph = try graphs.version(name, version, readingThrough: readingThrough) else {
                throw StoreError(message: "graph '\(name)' version \(version) is not loaded", kind: .incompatible)
            }
            do {
                return (try SessionState(snapshot: snapshot, graph: graph.graph), version)
            } catch {
                throw StoreError(
                    message: "the stored session no longer fits graph '\(name)' version \(version): \(error)", kind: .incompatible)
            }
        }
    }

    package static func restoreGraphs(from store: any SessionStore, into graphs: GraphRegistry, logger: Logger) throws {
        guard let durable = store as? any GraphStore else { return }
        for (document, version) in try durable.loadGraphs() {
            do {
                try graphs.restore(document, version: version)
            } catch {
                logger.error("stored graph no longer loads", metadata: ["version": "\(version)", "cause": "\(error.detail)"])
            }
        }
    }
}
