import Foundation
import NavCore
import NavDiagram
import Testing

@testable import NavTestSupport

/// `GET /v1/graphs/{name}/diagram`: the graph drawn by navd, open like the other graph reads.
@Suite struct GraphDiagramRouteTests {
    static let adminToken = "diagram-admin-token-0123"

    @Test func theDiagramIsAnSVGTaggedWithTheGraphVersion() throws {
        let navd = try startNavd()
        defer { _ = try? navd.stop() }
        let answer = try navd.request("GET", "/v1/graphs/news/diagram?format=svg")
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.headers["content-type"] == "image/svg+xml")
        #expect(answer.headers["etag"] == "\"1\"")
        #expect(answer.text.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg""#))
        #expect(answer.text.contains(#"<g class="scene start" id="scene-top" data-scene="top">"#))
        // What NavDiagram draws from the graph, byte for byte; and the same again (from the cache).
        let bytes = try #require(try? Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json")))
        let graph = try Graph.decode(json: Array(bytes)).graph
        #expect(answer.body == Diagram(graph: graph).rendered(as: .svg))
        #expect(try navd.request("GET", "/v1/graphs/news/diagram?format=svg").body == answer.body)
        // `format` defaults to svg.
        let plain = try navd.request("GET", "/v1/graphs/news/diagram")
        #expect(plain.status == 200 && plain.body == answer.body)
    }

    /// DOT and Mermaid: the same model in another text, with its own media type, tagged with
    /// the graph version, drawn once per version and format.
    @Test(arguments: [
        (DiagramFormat.dot, "text/vnd.graphviz; charset=utf-8", "digraph \"news\" {\n"),
        (.mermaid, "text/plain; charset=utf-8", "flowchart TB\n")
    ])
    func theDiagramInDOTAndMermaid(_ format: DiagramFormat, _ mediaType: String, _ prefix: String) throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.adminToken])
        defer { _ = try? navd.stop() }
        let answer = try navd.request("GET", "/v1/graphs/news/diagram?format=\(format.rawValue)")
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.headers["content-type"] == mediaType)
        #expect(answer.headers["etag"] == "\"1\"")
        #expect(answer.text.hasPrefix(prefix))
        let bytes = try #require(try? Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json")))
        let graph = try Graph.decode(json: Array(bytes)).graph
        #expect(answer.body == Diagram(graph: graph).rendered(as: format))
        #expect(try navd.request("GET", "/v1/graphs/news/diagram?format=\(format.rawValue)").body == answer.body)

        // A new version is drawn anew; the old one is still drawn as it was.
        let document: JSON = ["name": "news", "start": "/top", "scenes": ["top": ["links": ["more": ["path": "!extra"]]], "extra": [:]]]
        let upload = try navd.send("PUT", "/v1/graphs/news", json: document, token: Self.adminToken)
        #expect(upload.status == 200 && upload.headers["etag"] == "\"2\"", "\(upload)")
        let latest = try navd.request("GET", "/v1/graphs/news/diagram?format=\(format.rawValue)")
        #expect(latest.status == 200 && latest.headers["etag"] == "\"2\"")
        #expect(
            latest.text.contains(format == .dot ? #""top" -> "extra" [label="more\n!extra""# : #"s_top -.->|"more<br/>!extra"| s_extra"#),
            "\(latest.text)")
        let first = try navd.request("GET", "/v1/graphs/news/diagram?format=\(format.rawValue)&version=1")
        #expect(first.status == 200 && first.headers["etag"] == "\"1\"" && first.body == answer.body)
    }

    @Test func aVersionIsDrawnAsItWas() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.adminToken])
        defer { _ = try? navd.stop() }
        let document: JSON = ["name": "news", "start": "/top", "scenes": ["top": ["links": ["more": ["path": "!extra"]]], "extra": [:]]]
        let upload = try navd.send("PUT", "/v1/graphs/news", json: document, token: Self.adminToken)
        #expect(upload.status == 200 && upload.headers["etag"] == "\"2\"", "\(upload)")

        let latest = try navd.request("GET", "/v1/graphs/news/diagram?format=svg")
        #expect(latest.status == 200 && latest.headers["etag"] == "\"2\"")
        #expect(latest.text.contains(#"data-scene="extra""#))
        #expect(latest.text.contains(#"<g class="edge link segue-modal" data-from="top" data-to="extra" data-link="more">"#))
        let first = try navd.request("GET", "/v1/graphs/news/diagram?format=svg&version=1")
        #expect(first.status == 200 && first.headers["etag"] == "\"1\"")
        #expect(!first.text.contains(#"data-scene="extra""#) && first.text.contains(#"data-scene="show_news""#))

        let missing = try navd.request("GET", "/v1/graphs/news/diagram?version=3")
        #expect(missing.status == 404 && missing.code == "not_found", "\(missing)")
        for bad in ["0", "x", "1.0", "-1"] {
            let refused = try navd.request("GET", "/v1/graphs/news/diagram?version=\(bad)")
            #expect(refused.status == 400 && refused.code == "invalid_request", "\(bad): \(refused)")
            #expect(try refused.json()["param"] == "version")
        }
    }

    @Test func anUnknownGraphIsNotFound() throws {
        let navd = try startNavd()
        defer { _ = try? navd.stop() }
        let answer = try navd.request("GET", "/v1/graphs/nope/diagram?format=svg")
        #expect(answer.status == 404 && answer.code == "not_found", "\(answer)")
    }

    /// Only the formats navd draws; the format is checked before the graph is looked up.
    @Test(arguments: ["png", "SVG", "DOT", "graphviz", "mmd", "", "svg%20", "svg,dot", "%00"])
    func anotherFormatIsAnInvalidRequest(_ format: String) throws {
        let navd = try startNavd()
        defer { _ = try? navd.stop() }
        for graph in ["news", "nope"] {
            let answer = try navd.request("GET", "/v1/graphs/\(graph)/diagram?format=\(format)")
            #expect(answer.status == 400 && answer.code == "invalid_request", "\(graph) \(format): \(answer)")
            #expect(try answer.json()["param"] == "format")
        }
    }
}
