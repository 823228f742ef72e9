import Foundation
import NavJSON
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavTestSupport

/// Graph bounds at the API (docs/design.md, "Graphs" and "Heavy graph work"): names, documents
/// and start paths are checked on upload, graph memory and heavy graph work have budgets.
@Suite struct GraphBudgetTests {
    static let admin = "graph-budget-admin-0123"

    static func graph(_ name: String, start: String = "/a", scenes: Int = 1) -> JSON {
        var members: [String: JSON] = [:]
        for index in 0..<scenes { members[index == 0 ? "a" : "s\(index)"] = [:] }
        return ["name": .string(name), "start": .string(start), "scenes": .object(members)]
    }

    @Test func aGraphNameLongerThanTheBoundIsRefused() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.admin])
        defer { _ = try? navd.stop() }
        let long = String(repeating: "n", count: 65)
        let answer = try navd.send("PUT", "/v1/graphs/\(long)", json: Self.graph(long), token: Self.admin)
        #expect(answer.status == 422, "\(answer)")
        let problem = try answer.json()
        #expect(problem["code"] == "invalid_graph")
        #expect(problem["issues"]?[0]?["code"] == "invalid_name" && problem["issues"]?[0]?["pointer"] == "/name", "\(problem)")
        #expect(try navd.request("GET", "/v1/graphs").text.contains(long) == false)
        let fits = String(repeating: "n", count: 64)
        #expect(try navd.send("PUT", "/v1/graphs/\(fits)", json: Self.graph(fits), token: Self.admin).status == 201)
    }

    /// A start path deeper than the daemon's max depth was stored, then refused every create.
    @Test func aStartPathDeeperThanMaxDepthIsAnInvalidGraph() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.admin])
        defer { _ = try? navd.stop() }
        let answer = try navd.send(
            "PUT", "/v1/graphs/deep", json: Self.graph("deep", start: String(repeating: "/a", count: 40)), token: Self.admin)
        #expect(answer.status == 422, "\(answer)")
        let problem = try answer.json()
        #expect(problem["code"] == "invalid_graph")
        #expect(problem["issues"]?[0]?["code"] == "invalid_start" && problem["issues"]?[0]?["pointer"] == "/start", "\(problem)")
        #expect(try navd.request("GET", "/v1/graphs/deep").status == 404)
    }

    /// Past `--max-graph-memory` an upload is 503 `over_capacity` with `Retry-After`, and
    /// nothing changes; removing a version makes room again.
    @Test func graphMemoryBudget() throws {
        let navd = try startNavd(graphs: [], arguments: ["--admin-token", Self.admin, "--max-graph-memory", "400000"])
        defer { _ = try? navd.stop() }
        var stored = 0
        var refused: HTTPMessage?
        for index in 1...200 {
            let answer = try navd.send("PUT", "/v1/graphs/g", json: Self.graph("g", scenes: 20 + index), token: Self.admin)
            if answer.status == 503 {
                refused = answer
                break
            }
            #expect(answer.status == 200 || answer.status == 201, "\(answer)")
            stored = index
        }
        let answer = try #require(refused, "no upload was refused")
        #expect(try answer.json()["code"] == "over_capacity")
        #expect(answer.headers["retry-after"] != nil)
        #expect(stored >= 2)
        #expect(try navd.request("GET", "/v1/graphs/g").headers["etag"] == "\"\(stored)\"")
        // The budget holds what is loaded, never more than its limit.
        let metrics = try navd.request("GET", "/metrics").text
        #expect(metrics.contains(#"navd_budget_limit{resource="graph_bytes"} 400000"#))
        let used = try #require(try GraphRemovalTests.graphBytes(navd))
        #expect(used > 0 && used <= 400000)
        // Removing an older version makes room.
        #expect(try navd.send("DELETE", "/v1/graphs/g?version=1", token: Self.admin).status == 204)
        #expect(try #require(try GraphRemovalTests.graphBytes(navd)) < used)
        #expect(try navd.send("PUT", "/v1/graphs/g", json: Self.graph("g", scenes: 21), token: Self.admin).status == 200)
    }

    /// While `--max-graph-work` jobs run, another diagram to draw is 503 `over_capacity` with
    /// `Retry-After`; `/healthz`, reads and diagrams already drawn still answer.
    @Test func heavyWorkBudget() throws {
        let navd = try InProcessHarness(arguments: ["--admin-token", Self.admin, "--max-graph-work", "1"])
        defer { _ = navd.stop() }
        let work = try #require(navd.application.budgets["graph_work"])
        #expect(work.limit == 1)
        #expect(try navd.request("GET", "/v1/graphs/news/diagram?format=dot").status == 200)
        #expect(work.used == 0)
        // A job holds the only slot.
        #expect(work.acquire())
        let refused = try navd.request("GET", "/v1/graphs/news/diagram?format=svg")
        #expect(try refused.status == 503 && refused.json()["code"] == "over_capacity", "\(refused)")
        #expect(refused.headers["retry-after"] != nil)
        let upload = try navd.send("PUT", "/v1/graphs/other", json: Self.graph("other"), token: Self.admin)
        #expect(try upload.status == 503 && upload.json()["code"] == "over_capacity", "\(upload)")
        #expect(try navd.request("GET", "/healthz").status == 200)
        #expect(try navd.request("GET", "/v1/graphs/news").status == 200)
        // A diagram drawn before is a lookup, not work.
        #expect(try navd.request("GET", "/v1/graphs/news/diagram?format=dot").status == 200)
        work.release()
        #expect(try navd.request("GET", "/v1/graphs/news/diagram?format=svg").status == 200)
        #expect(work.used == 0)
    }

    /// The default leaves at least one HTTP thread free of heavy work.
    @Test func theDefaultWorkBudgetLeavesAThreadFree() throws {
        for threads in [2, 3, 8] {
            let navd = try InProcessHarness(arguments: ["--threads", String(threads)])
            defer { _ = navd.stop() }
            #expect(navd.application.budgets["graph_work"]?.limit == threads - 1)
        }
    }

    /// A graph file over the per-document bound is refused before it is read (`--graph`,
    /// `navd validate`, `navd tours`).
    @Test func aGraphFileOverTheBoundIsRefusedUnread() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/big.json"
        let document = Array(#"{"name":"big","start":"/a","scenes":{"a":{}}}"#.utf8)
        try Data(document + [UInt8](repeating: UInt8(ascii: " "), count: 9 << 20)).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try GraphFile.read(path)
        } throws: { error in
            "\(error)".contains("too_large")
        }
        try Data(document).write(to: URL(fileURLWithPath: path))
        #expect(try GraphFile.read(path).objectValue?["name"]?.stringValue == "big")
    }
}
