import Foundation
import Testing

@testable import NavAPI
@testable import NavSessions
@testable import NavTestSupport

/// `DELETE /v1/graphs/{name}?version=N` (docs/design.md, "Graphs"): a version no session runs on
/// leaves the daemon and its store, frees its share of `graph_bytes`, and a restart does not
/// bring it back; the newest version and a version in use stay.
@Suite(.serialized) struct GraphRemovalTests {
    static let admin = "graph-removal-admin-0123"

    /// `news` with one more scene: another document of the graph.
    static func variant(_ scene: String) throws -> JSON {
        try TestFixtures.newsVariant(scene)
    }

    /// What `/metrics` says `graph_bytes` holds.
    static func graphBytes(_ navd: any NavdHarness) throws -> Int? {
        let text = try navd.request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(#"navd_budget_used{resource="graph_bytes"}"#) }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
    }

    @Test func memoryStore() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.admin])
        defer { _ = try? navd.stop() }
        try checkRemoval(navd)
    }

    @Test func sqliteStoreAndRestart() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        let navd = try startNavd(store: store, arguments: ["--admin-token", Self.admin])
        try checkRemoval(navd)
        #expect(try navd.stop() == 0)
        let again = try startNavd(graphs: [], store: store, arguments: ["--admin-token", Self.admin])
        defer { _ = try? again.stop() }
        #expect(try again.request("GET", "/v1/graphs/news?version=2").status == 404)
        #expect(try again.request("GET", "/v1/graphs/news?version=1").status == 200)
        #expect(try again.request("GET", "/v1/graphs/news?version=3").status == 200)
    }

    @Test(.needsPostgres) func postgresStoreAndRestart() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let navd = try startNavd(store: cluster.url, arguments: ["--admin-token", Self.admin])
        try checkRemoval(navd)
        #expect(try navd.stop() == 0)
        let again = try startNavd(graphs: [], store: cluster.url, arguments: ["--admin-token", Self.admin])
        defer { _ = try? again.stop() }
        #expect(try again.request("GET", "/v1/graphs/news?version=2").status == 404)
        #expect(try again.request("GET", "/v1/graphs/news?version=3").status == 200)
        #expect(try cluster.query("SELECT count(*) FROM graphs WHERE name = 'news' AND version = 2").contains("0"))
    }

    /// Versions 1 (a session runs on it), 2 (none does) and 3 (the newest): only 2 can go.
    private func checkRemoval(_ navd: any NavdHarness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let onFirst = try navd.createSession()
        #expect(try navd.send("PUT", "/v1/graphs/news", json: try Self.variant("two"), token: Self.admin).status == 200)
        #expect(try navd.send("PUT", "/v1/graphs/news", json: try Self.variant("three"), token: Self.admin).status == 200)
        let before = try #require(try Self.graphBytes(navd))

        // Admin only.
        #expect(try navd.request("DELETE", "/v1/graphs/news?version=2").status == 401)
        // The newest version and one a session runs on stay.
        let newest = try navd.send("DELETE", "/v1/graphs/news?version=3", token: Self.admin)
        #expect(try newest.status == 409 && newest.json()["code"] == "graph_in_use", "\(newest)")
        let inUse = try navd.send("DELETE", "/v1/graphs/news?version=1", token: Self.admin)
        #expect(try inUse.status == 409 && inUse.json()["code"] == "graph_in_use", "\(inUse)")
        // Unknown versions and graphs, and a missing or malformed version.
        #expect(try navd.send("DELETE", "/v1/graphs/news?version=9", token: Self.admin).status == 404)
        #expect(try navd.send("DELETE", "/v1/graphs/nothing?version=1", token: Self.admin).status == 404)
        #expect(try navd.send("DELETE", "/v1/graphs/news", token: Self.admin).status == 400)
        #expect(try navd.send("DELETE", "/v1/graphs/news?version=x", token: Self.admin).status == 400)

        let removed = try navd.send("DELETE", "/v1/graphs/news?version=2", token: Self.admin)
        #expect(removed.status == 204, "\(removed)")
        #expect(try navd.request("GET", "/v1/graphs/news?version=2").status == 404)
        #expect(try navd.request("GET", "/v1/graphs/news/diagram?version=2").status == 404)
        #expect(try navd.send("DELETE", "/v1/graphs/news?version=2", token: Self.admin).status == 404)
        // Its memory is given back; the others still serve.
        #expect(try #require(try Self.graphBytes(navd)) < before)
        #expect(try navd.request("GET", "/v1/graphs/news?version=1").status == 200)
        #expect(try navd.view(onFirst)["graph"]?["version"]?.int == 1)
        #expect(try navd.createSession().created["graph"]?["version"]?.int == 3)
    }
}
