import Foundation
import NavCore
import NavJSON
import NavSessions
import Testing

// Helpers that tests of several targets share, moved out of the test files that first had them.

/// Stores, sessions and graphs for store and service tests.
enum TestFixtures {
    static func session(_ id: String, in graphs: GraphRegistry) throws -> (StoredSession, [LifecycleEvent]) {
        let graph = try #require(try graphs.latest("news"))
        let outcome = try graph.navigator.start(at: nil, context: [:])
        let session = StoredSession(
            id: id, graphName: "news", graphVersion: graph.version, tokenDigest: Token.digest("t"),
            state: outcome.state, createdAt: 1, touchedAt: 1
        )
        return (session, outcome.events)
    }

    static func graphs() throws -> GraphRegistry {
        let graphs = GraphRegistry()
        let document = try JSONValue(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        _ = try graphs.add(document)
        return graphs
    }

    static func service(
        maxSessions: Int = 100_000, sessionTTL: Int64 = 24 * 3600 * 1000, store: any SessionStore = MemoryStore(),
        now: @escaping @Sendable () -> Int64 = Clock.milliseconds
    ) throws -> SessionService {
        let graphs = GraphRegistry()
        let document = try JSONValue(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        _ = try graphs.add(document)
        return SessionService(
            store: store, graphs: graphs, configuration: .init(maxSessions: maxSessions, sessionTTL: sessionTTL), now: now)
    }

    /// `Examples/news.json` with one more scene: another document of the graph `news`.
    static func newsVariant(_ scene: String) throws -> JSON {
        let news = try JSON(parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        guard case .object(var members) = news, case .object(var scenes)? = members["scenes"] else {
            throw DaemonHarness.StartFailure(description: "Examples/news.json is not a graph document")
        }
        scenes[scene] = .object([:])
        members["scenes"] = .object(scenes)
        return .object(members)
    }

    /// `navd serve` on `store`, expected to fail at start-up. A daemon that starts anyway is
    /// killed after 15 s (and the test fails).
    static func serveFails(_ store: String, graph: String = "Examples/news.json") throws -> (status: Int32, errors: String) {
        let port = try DaemonHarness.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("navd-damaged-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try ChildProcess(
            DaemonHarness.binary.path, ["serve", "--store", store, "--listen", "127.0.0.1:\(port)", "--graph", graph],
            environment: DaemonHarness.environment(), directory: DaemonHarness.packageRoot.path, output: .file(log.path), errors: .output
        )
        let ended = process.wait(seconds: 15)
        let started = ended == nil
        if started {
            process.send(SIGKILL)
            _ = process.waitUntilExit()
        }
        let errors = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(!started && ended != .exited(0), "navd started on a damaged store: \(errors.suffix(500))")
        return (ended.map(CLIProcess.status) ?? -1, errors)
    }
}

/// Paths on `Examples/news.json` that the durability tests navigate between, as sent and as answered.
enum NewsPaths {
    static let pathA = "^/top/list_news(category=1)/show_news(id=2)"
    static let pathB = "^/top"
    static let canonicalA = "/top/list_news(category=1)/show_news(id=2)"
    static let canonicalB = "/top"
}
