import Foundation
import Testing

@testable import NavTestSupport

/// Client text that reaches PostgreSQL's side of the daemon: whatever a client names, the answer
/// is the one the other stores give (a 4xx), never a 500 because libpq cannot take the text.
@Suite(.serialized) struct PostgresInputTests {
    /// A graph name with a NUL (`news%00` in a URL, `"news\u0000"` in a body) names no graph:
    /// 404 `not_found` and 422 `unknown_graph`, as on SQLite and in memory. It used to reach
    /// libpq as a text parameter, which refuses a NUL, and was answered 500 `internal`.
    @Test(.needsPostgres) func graphNamesNoGraphCanHaveAreUnknownNotInternalErrors() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemon = try startNavd(store: cluster.url)
        for target in ["/v1/graphs/news%00", "/v1/graphs/news%00x", "/v1/graphs/%00", "/v1/graphs/news%00?version=1", "/v1/graphs/a%20b"] {
            let answer = try daemon.request("GET", target)
            #expect(answer.status == 404, "GET \(target): \(answer.text)")
            #expect(try answer.json()["code"]?.string == "not_found", "GET \(target)")
        }
        for name in ["news\u{0}", "news\u{0}x", "\u{0}", "..", "a b"] {
            let answer = try daemon.send("POST", "/v1/sessions", json: ["graph": .string(name)])
            #expect(answer.status == 422, "graph \(name.debugDescription): \(answer.text)")
            #expect(try answer.json()["code"]?.string == "unknown_graph", "graph \(name.debugDescription)")
        }
        // The graph itself is still there, by its own name.
        #expect(try daemon.request("GET", "/v1/graphs/news").status == 200)
        #expect(try daemon.createSession(graph: "news").created["graph"]?["name"]?.string == "news")
    }
}
