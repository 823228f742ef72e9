import Foundation
import Testing

@testable import NavTestSupport

/// Hostile graphs and diagrams (docs/design.md, "Graphs" and "Heavy graph work"): big and
/// numerous uploads stay within the graph memory budget, removed versions give their memory
/// back, and diagrams drawn at once never hold every request thread.
///
/// Nothing here depends on the machine's speed: the assertions are answers, bounds and
/// budgets falling back, with generous timeouts.
@Suite(.serialized) struct GraphAbuseTests {
    static let admin = "graph-abuse-admin-0123456"

    /// A graph of `scenes` scenes in a ring and `links` global links; `tag` makes the document
    /// (and so its version) differ.
    static func graph(_ name: String, scenes: Int, links: Int = 0, tag: Int = 0, start: String = "/s0") -> JSON {
        var members: [String: JSON] = [:]
        for index in 0..<scenes {
            members["s\(index)"] = ["links": ["next": ["path": .string("/s\((index + 1) % scenes)")]]]
        }
        var global: [String: JSON] = [:]
        for index in 0..<links { global["g\(index)"] = ["path": .string("/s\(index % scenes)")] }
        return [
            "name": .string(name), "start": .string(start), "scenes": .object(members), "links": .object(global),
            "description": .string("tag \(tag)")
        ]
    }

    static func budget(_ navd: any NavdHarness, _ kind: String, _ resource: String) throws -> Int? {
        let text = try navd.request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("navd_budget_\(kind){resource=\"\(resource)\"}") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
    }

    /// Hundreds of uploads of new versions against a small `--max-graph-memory`: uploads past it
    /// are 503 with `Retry-After` and store nothing, every acknowledged version is still served,
    /// and removing old versions lets uploads in again.
    @Test func manyVersionsStayWithinTheGraphMemoryBudget() throws {
        let navd = try startNavd(graphs: [], arguments: ["--admin-token", Self.admin, "--max-graph-memory", "4M"])
        defer { _ = try? navd.stop() }
        var acknowledged: [Int] = []
        var refusals = 0
        for tag in 0..<120 {
            let answer = try navd.send("PUT", "/v1/graphs/many", json: Self.graph("many", scenes: 150, tag: tag), token: Self.admin)
            switch answer.status {
            case 200, 201: acknowledged.append(try #require(try answer.json()["version"]?.int))
            case 503:
                refusals += 1
                #expect(try answer.json()["code"] == "over_capacity")
                #expect(answer.headers["retry-after"] != nil)
            default: Issue.record("unexpected answer: \(answer)")
            }
            if tag % 10 == 0 { #expect(try #require(try Self.budget(navd, "used", "graph_bytes")) <= 4 << 20) }
        }
        #expect(try #require(try Self.budget(navd, "used", "graph_bytes")) <= 4 << 20)
        #expect(refusals > 0 && acknowledged.count >= 2)
        for version in acknowledged {
            #expect(try navd.request("GET", "/v1/graphs/many?version=\(version)").status == 200)
        }
        // Remove every version but the newest: the budget falls back, uploads are taken again.
        let full = try #require(try Self.budget(navd, "used", "graph_bytes"))
        for version in acknowledged.dropLast() {
            #expect(try navd.send("DELETE", "/v1/graphs/many?version=\(version)", token: Self.admin).status == 204)
        }
        let left = try #require(try Self.budget(navd, "used", "graph_bytes"))
        // What is left is one version's share (documents differ only in their tag's digits).
        #expect(left * acknowledged.count <= full + 64 * acknowledged.count, "\(left) of \(full)")
        let again = try navd.send("PUT", "/v1/graphs/many", json: Self.graph("many", scenes: 150, tag: 1000), token: Self.admin)
        #expect(again.status == 200, "\(again)")
        #expect(try navd.request("GET", "/v1/graphs/many?version=\(try #require(acknowledged.last))").status == 200)
    }

    /// ``graph(_:scenes:links:tag:start:)`` written as JSON text directly: the large documents
    /// below cost the test little to make.
    static func text(_ name: String, scenes: Int, links: Int = 0, start: String = "/s0") -> [UInt8] {
        var text = #"{"name":"\#(name)","start":"\#(start)","scenes":{"#
        for index in 0..<scenes {
            text += (index == 0 ? "" : ",") + #""s\#(index)":{"links":{"next":{"path":"/s\#((index + 1) % scenes)"}}}"#
        }
        text += #"},"links":{"#
        for index in 0..<links {
            text += (index == 0 ? "" : ",") + #""g\#(index)":{"path":"/s\#(index % scenes)"}"#
        }
        return Array((text + "}}").utf8)
    }

    /// Documents over each bound are refused before they cost their size, and change nothing;
    /// the product that once cost gigabytes (scenes × global links) now loads.
    @Test func bigAndDeepUploadsAreRefused() throws {
        let navd = try startNavd(graphs: [], arguments: ["--admin-token", Self.admin, "--max-body", "33554432"])
        defer { _ = try? navd.stop() }
        let json = ["Content-Type": "application/json", "Authorization": "Bearer \(Self.admin)"]
        // Over 8 MiB: 413, before it is parsed.
        let padded = Self.text("huge", scenes: 10) + [UInt8](repeating: UInt8(ascii: " "), count: 9 << 20)
        let huge = try navd.request("PUT", "/v1/graphs/huge", headers: json, body: padded)
        #expect(try huge.status == 413 && huge.json()["code"] == "payload_too_large", "\(huge.status)")
        // Too many scenes, too many links, too deep a start: 422 with the issue's pointer.
        let scenes = try navd.request("PUT", "/v1/graphs/wide", headers: json, body: Self.text("wide", scenes: 10_001))
        #expect(try scenes.status == 422 && scenes.json()["issues"]?[0]?["pointer"] == "/scenes", "\(scenes.status)")
        let links = try navd.request("PUT", "/v1/graphs/linked", headers: json, body: Self.text("linked", scenes: 10, links: 50_000))
        #expect(try links.status == 422 && links.json()["issues"]?[0]?["pointer"] == "/links", "\(links.status)")
        let deep = try navd.request(
            "PUT", "/v1/graphs/deep", headers: json, body: Self.text("deep", scenes: 2, start: String(repeating: "/s0", count: 33)))
        #expect(try deep.status == 422 && deep.json()["issues"]?[0]?["pointer"] == "/start", "\(deep.status)")
        #expect(try navd.request("GET", "/v1/graphs").json()["graphs"]?.array?.isEmpty == true)
        // 1,500 scenes and 1,500 global links (once 70 MB a version): loads, and a session's view
        // lists the global links.
        let product = try navd.request("PUT", "/v1/graphs/product", headers: json, body: Self.text("product", scenes: 1_500, links: 1_500))
        #expect(product.status == 201, "\(product.status)")
        let session = try navd.createSession(graph: "product")
        #expect(session.created["actions"]?["links"]?.array?.count == 1_501)
        #expect(try #require(try Self.budget(navd, "used", "graph_bytes")) < 8 << 20)
    }

    /// Diagrams of big graphs, each a new version (no cache to answer from), asked from eight
    /// threads at once against two heavy-work slots of three HTTP threads, while `/healthz` is
    /// polled: `/healthz` answers every time, each diagram is drawn or refused with 503 and
    /// `Retry-After`, and every slot is free again afterwards.
    @Test func concurrentDiagramsLeaveHealthzAnswered() throws {
        let navd = try DaemonHarness(
            graphs: [], arguments: ["--admin-token", Self.admin, "--threads", "3", "--max-graph-work", "2", "--max-body", "4194304"]
        )
        defer { _ = try? navd.stop() }
        let versions = 4
        for tag in 0..<versions {
            let answer = try navd.send(
                "PUT", "/v1/graphs/drawn", json: Self.graph("drawn", scenes: 1_200, links: 1_200, tag: tag), token: Self.admin)
            #expect(answer.status == 200 || answer.status == 201, "\(answer.status)")
        }
        let formats = ["svg", "dot", "mermaid"]
        let requests = (0..<24).map { index in
            OnThread { () throws -> (Int, Bool) in
                let target = "/v1/graphs/drawn/diagram?version=\(index % versions + 1)&format=\(formats[index / versions % formats.count])"
                let answer = try navd.request("GET", target)
                return (answer.status, answer.headers["retry-after"] != nil)
            }
        }
        var health: [Int] = []
        for _ in 0..<40 {
            health.append(try navd.request("GET", "/healthz").status)
            usleep(50_000)
        }
        var drawn = 0
        for request in requests {
            let (status, retryAfter) = try request.value()
            #expect(status == 200 || (status == 503 && retryAfter), "\(status)")
            if status == 200 { drawn += 1 }
        }
        #expect(health.allSatisfy { $0 == 200 }, "\(health)")
        #expect(drawn > 0)
        #expect(try Self.budget(navd, "used", "graph_work") == 0)
        #expect(try Self.budget(navd, "limit", "graph_work") == 2)
        #expect(try navd.createSession(graph: "drawn").created["graph"]?["version"]?.int == versions)
    }
}
