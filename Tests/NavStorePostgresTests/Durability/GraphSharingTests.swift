import Foundation
import Testing

@testable import NavSessions
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Graphs across restarts and processes: the first `--graph` is the default after any restart,
/// and on PostgreSQL a version number names one document in every process.
@Suite(.serialized) struct GraphSharingTests {
    static let admin = "admin-token-0123456789"

    /// The graph name and version of a new session created with `POST /v1/sessions {}`.
    static func defaultGraph(of daemon: DaemonHarness, sourceLocation: SourceLocation = #_sourceLocation) throws -> (String?, Int?) {
        let graph = try daemon.createSession(sourceLocation: sourceLocation).created["graph"]
        return (graph?["name"]?.string, graph?["version"]?.int)
    }

    // MARK: Defect 1: the default graph after a restart

    @Test func sqliteKeepsTheDefaultGraphAcrossRestarts() throws {
        let folder = try TemporaryFolder()
        try checkDefaultGraph(store: "sqlite:\(folder.path)/navd.db", folder: folder)
    }

    @Test(.needsPostgres) func postgresKeepsTheDefaultGraphAcrossRestarts() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let folder = try TemporaryFolder()
        try checkDefaultGraph(store: cluster.url, folder: folder)
    }

    private func checkDefaultGraph(store: String, folder: TemporaryFolder) throws {
        let changed = "\(folder.path)/news-changed.json"
        try Data(try TestFixtures.newsVariant("whats_new").bytes).write(to: URL(fileURLWithPath: changed))
        let kabukit = DaemonHarness.packageRoot.appendingPathComponent("Examples/kabukit.json").path

        var daemon = try DaemonHarness(store: store)
        let first = try daemon.createSession()
        #expect(try Self.defaultGraph(of: daemon) == ("news", 1))
        #expect(try daemon.stop() == 0)

        // The same file again: the stored version is used, and it is still the default.
        daemon = try DaemonHarness(store: store)
        #expect(try Self.defaultGraph(of: daemon) == ("news", 1))
        #expect(try daemon.view(first)["graph"]?["version"]?.int == 1)
        #expect(try daemon.stop() == 0)

        // A changed file: a new version, still the default.
        daemon = try DaemonHarness(graphs: [], store: store, arguments: ["--graph", changed])
        #expect(try Self.defaultGraph(of: daemon) == ("news", 2))
        #expect(try daemon.stop() == 0)

        // No --graph: stored sessions work, and the default is the graph stored first (its latest version).
        daemon = try DaemonHarness(graphs: [], store: store)
        #expect(try daemon.navigate(first, "list_news").status == 200)
        #expect(try Self.defaultGraph(of: daemon) == ("news", 2))
        #expect(try daemon.stop() == 0)

        // Another order: the first --graph is the default, whatever the store held.
        daemon = try DaemonHarness(graphs: [], store: store, arguments: ["--graph", kabukit, "--graph", changed])
        #expect(try Self.defaultGraph(of: daemon).0 == "kabukit")
        #expect(try daemon.stop() == 0)
        daemon = try DaemonHarness(graphs: [], store: store, arguments: ["--graph", changed, "--graph", kabukit])
        #expect(try Self.defaultGraph(of: daemon) == ("news", 2), "the changed file is already the latest version: no version 3")
        #expect(try daemon.view(first)["path"]?.string == "/top/list_news(category=0)")
        #expect(try daemon.stop() == 0)
    }

    @Test func sqliteKeepsTheDefaultGraphWhenItsFirstVersionIsRemoved() throws {
        let folder = try TemporaryFolder()
        try checkDefaultAfterRemoval(store: "sqlite:\(folder.path)/navd.db")
    }

    @Test(.needsPostgres) func postgresKeepsTheDefaultGraphWhenItsFirstVersionIsRemoved() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        try checkDefaultAfterRemoval(store: cluster.url)
    }

    /// The default graph without `--graph` is the graph stored first, even once the version
    /// stored first is gone: `news` 1, then `kabukit` 1 and `news` 2, then `news` 1 removed.
    private func checkDefaultAfterRemoval(store: String) throws {
        let kabukit = try JSON(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/kabukit.json"))))
        var daemon = try DaemonHarness(store: store, arguments: ["--admin-token", Self.admin])
        #expect(try daemon.send("PUT", "/v1/graphs/kabukit", json: kabukit, token: Self.admin).status == 201)
        #expect(try daemon.send("PUT", "/v1/graphs/news", json: try TestFixtures.newsVariant("whats_new"), token: Self.admin).status == 200)
        #expect(try daemon.send("DELETE", "/v1/graphs/news?version=1", token: Self.admin).status == 204)
        #expect(try daemon.stop() == 0)

        daemon = try DaemonHarness(graphs: [], store: store, arguments: ["--admin-token", Self.admin])
        #expect(try Self.defaultGraph(of: daemon) == ("news", 2))
        #expect(try daemon.stop() == 0)
    }

    // MARK: Defect 3: graph versions shared between processes

    /// An upload through one process is read, used and listed through another at once.
    @Test(.needsPostgres) func anUploadOnOneProcessIsServedByAnother() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let a = try DaemonHarness(store: cluster.url, arguments: ["--admin-token", Self.admin])
        let b = try DaemonHarness(store: cluster.url, arguments: ["--admin-token", Self.admin])
        // B has read `news` (and would cache it) before A uploads a new version.
        #expect(try b.send("GET", "/v1/graphs/news").json()["version"]?.int == 1)

        var g3 = try TestFixtures.newsVariant("g3_only")
        if case .object(var members) = g3 {
            members["name"] = "g3"
            g3 = .object(members)
        }
        let uploaded = try a.send("PUT", "/v1/graphs/g3", json: g3, token: Self.admin)
        #expect(uploaded.status == 201)
        #expect(try b.send("GET", "/v1/graphs/g3").json()["version"]?.int == 1)
        #expect(try b.createSession(graph: "g3").created["graph"]?["name"]?.string == "g3")
        let listed = try b.send("GET", "/v1/graphs").json()["graphs"]?.array?.compactMap { $0["name"]?.string }
        #expect(listed == ["g3", "news"])

        // A new version of a graph B knows: B serves it within its refresh interval (1 s).
        #expect(
            try a.send("PUT", "/v1/graphs/news", json: TestFixtures.newsVariant("extra"), token: Self.admin).json()["version"]?.int == 2)
        #expect(try b.send("GET", "/v1/graphs/news?version=2").json()["version"]?.int == 2, "an explicit version is read through at once")
        var latest: Int?
        let deadline = Date().addingTimeInterval(3)
        repeat {
            latest = try Self.defaultGraph(of: b).1
            if latest != 2 { usleep(100_000) }
        } while latest != 2 && Date() < deadline
        #expect(latest == 2)
        #expect(try b.send("GET", "/v1/graphs/news").json()["version"]?.int == 2)
        #expect(try a.stop() == 0)
        #expect(try b.stop() == 0)
    }

    /// Concurrent uploads of different documents through two processes get distinct versions,
    /// each readable through both and after a restart; the same document again is no new version.
    @Test(.needsPostgres) func concurrentUploadsOnTwoProcessesGetDistinctVersions() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemons = try (0..<2).map { _ in try DaemonHarness(store: cluster.url, arguments: ["--admin-token", Self.admin]) }
        let documents = try (0..<8).map { try TestFixtures.newsVariant("scene_\($0)") }
        let answers = Locked<[(document: Int, version: Int)]>([])
        let statuses = Locked<[Int]>([])
        let group = DispatchGroup()
        for (index, document) in documents.enumerated() {
            group.enter()
            Thread {
                let daemon = daemons[index % 2]
                if let answer = try? daemon.send("PUT", "/v1/graphs/news", json: document, token: Self.admin) {
                    statuses.withLock { $0.append(answer.status) }
                    if let version = (try? answer.json())?["version"]?.int { answers.withLock { $0.append((index, version)) } }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let versions = answers.withLock { $0 }
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: documents.count))
        #expect(Set(versions.map(\.version)) == Set(2...9), "every upload got its own version after --graph's version 1")
        for daemon in daemons {
            for (index, version) in versions {
                let read = try daemon.send("GET", "/v1/graphs/news?version=\(version)").json()
                #expect(read["document"] == documents[index], "version \(version) on port \(daemon.port)")
            }
        }
        // The same document again is not a new version.
        let last = try #require(versions.max { $0.version < $1.version })
        let again = try daemons[1].send("PUT", "/v1/graphs/news", json: documents[last.document], token: Self.admin)
        #expect(again.status == 200)
        #expect(try again.json()["version"]?.int == last.version)
        #expect(try cluster.query("SELECT count(*) FROM graphs WHERE name = 'news'") == "9")
        for daemon in daemons { #expect(try daemon.stop() == 0) }

        // A restart keeps every version.
        let restarted = try DaemonHarness(graphs: [], store: cluster.url)
        for (index, version) in versions {
            #expect(try restarted.send("GET", "/v1/graphs/news?version=\(version)").json()["document"] == documents[index])
        }
        #expect(try restarted.send("GET", "/v1/graphs/news").json()["version"]?.int == 9)
        #expect(try restarted.stop() == 0)
    }

    /// Processes starting together with the same `--graph` file store one version, not one each.
    @Test(.needsPostgres) func processesStartingTogetherStoreOneVersion() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let started = Locked<[DaemonHarness]>([])
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread {
                if let daemon = try? DaemonHarness(store: cluster.url) { started.withLock { $0.append(daemon) } }
                group.leave()
            }.start()
        }
        group.wait()
        let daemons = started.withLock { $0 }
        #expect(daemons.count == 3)
        #expect(try cluster.query("SELECT string_agg(version::text, ',') FROM graphs WHERE name = 'news'") == "1")
        for daemon in daemons {
            #expect(try Self.defaultGraph(of: daemon) == ("news", 1))
            #expect(try daemon.stop() == 0)
        }
    }

    /// SQLite keeps the same rules: the store allocates, the same document is not a new version.
    @Test func sqliteUploadsFollowTheSameRules() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        var daemon = try DaemonHarness(store: store, arguments: ["--admin-token", Self.admin])
        let variant = try TestFixtures.newsVariant("extra")
        #expect(try daemon.send("PUT", "/v1/graphs/news", json: variant, token: Self.admin).json()["version"]?.int == 2)
        let again = try daemon.send("PUT", "/v1/graphs/news", json: variant, token: Self.admin)
        #expect(again.status == 200)
        #expect(try again.json()["version"]?.int == 2)
        #expect(try daemon.stop() == 0)
        // news.json differs from the latest version (2): it becomes version 3, the default.
        daemon = try DaemonHarness(store: store, arguments: ["--admin-token", Self.admin])
        #expect(try Self.defaultGraph(of: daemon) == ("news", 3))
        #expect(try daemon.send("GET", "/v1/graphs/news?version=2").json()["document"] == variant)
        #expect(try daemon.send("GET", "/v1/graphs/news?version=4").code == "not_found")
        #expect(try daemon.send("GET", "/v1/graphs/news?version=0").code == "invalid_request")
        #expect(try daemon.stop() == 0)
    }
}
