import NavCore
import Testing

@testable import NavDiagram

/// The Graphviz document: every scene a node, every tab and link an edge labelled with its
/// name and template, every text quoted and escaped, the same bytes for the same graph.
@Suite struct DOTRendererTests {
    static func dot(_ graph: Graph) -> String {
        String(decoding: Diagram(graph: graph).rendered(as: .dot), as: UTF8.self)
    }

    static func graphs() -> [(String, Graph)] {
        DiagramLayoutTests.graphs() + (Graphs.awkward.map { [("awkward", $0)] } ?? [])
    }

    @Test func theAwkwardGraphIsValid() {
        #expect(Graphs.awkward != nil)
    }

    /// Read back as Graphviz reads it, the document has exactly the diagram's nodes and edges,
    /// with their names, labels and marks as they are in the graph.
    @Test(arguments: graphs().map(\.0))
    func everySceneAndEdgeIsThereAsWritten(_ name: String) throws {
        let graph = try #require(Self.graphs().first { $0.0 == name }?.1)
        let diagram = Diagram(graph: graph)
        let text = Self.dot(graph)
        #expect(text.hasPrefix("digraph \"") && text.hasSuffix("}\n"))
        let reader = DOTReader(text)
        #expect(reader.unreadable.isEmpty, "\(reader.unreadable)")

        var expectedNodes = diagram.scenes.map(\.name)
        if diagram.hasGlobalLinks { expectedNodes.append(DOTRenderer.anyScreenID) }
        #expect(reader.nodes.map { $0.ids[0] } == expectedNodes)
        for (scene, node) in zip(diagram.scenes, reader.nodes) {
            #expect(
                node.attributes["label"]
                    == ([scene.name] + (scene.tagLine.map { [$0] } ?? [])).map(\.controlsReplaced).joined(separator: "\n"))
            let classes = Set((node.attributes["class"] ?? "").split(separator: " ").map(String.init))
            #expect(classes.contains("start") == scene.onStartPath)
            #expect(classes.contains("tabs") == (scene.tabs != nil))
            #expect(classes.contains("fixed") == !scene.removable)
            #expect(classes.contains("guarded") == !scene.requires.isEmpty)
        }

        #expect(reader.edges.count == diagram.edges.count)
        for (edge, read) in zip(diagram.edges, reader.edges) {
            #expect(read.ids == [edge.from ?? DOTRenderer.anyScreenID, edge.to])
            let classes = (read.attributes["class"] ?? "").split(separator: " ").map(String.init)
            #expect(classes.prefix(2) == ["edge", edge.kind.rawValue])
            if edge.kind == .tab {
                #expect(read.attributes["label"] == nil)
            } else {
                #expect(read.attributes["label"] == "\(edge.link ?? "redirect")\n\(edge.template ?? "")")
            }
        }
    }

    @Test func theNewsDocument() throws {
        let text = Self.dot(try #require(Graphs.news))
        #expect(text.contains(##"  "top" [label="top\nstart", class="scene start", color="#2f855a", penwidth="2.5"];"##))
        #expect(text.contains(##"  "home" [label="home\ntabs", class="scene tabs", style="rounded,filled", fillcolor="#edf2fa"];"##))
        #expect(text.contains(#"  "onboarding" [label="onboarding\nnot removable", class="scene fixed", peripheries="2"];"#))
        #expect(text.contains(#"  "profile" [label="profile\nrequires user", class="scene guarded"];"#))
        #expect(text.contains(#"  "home" -> "friend" [class="edge tab", style="dotted""#))
        #expect(
            text.contains(#"  "top" -> "list_coupon" [label="coupons\n!/list_coupon", class="edge link segue-modal", style="dashed"];"#))
        #expect(text.contains(#"  "any screen" -> "login" [label="login\n!login", class="edge global segue-modal", style="dashed""#))
    }

    /// `"` and `\` are escaped, so Graphviz reads no escape sequence of its own in a text;
    /// control characters cannot break a line.
    @Test func everyTextIsEscaped() throws {
        let graph = try #require(Graphs.awkward)
        let text = Self.dot(graph)
        #expect(
            text.contains(##"requires a\"b\\c, line�break, <b>&amp;</b>, #quot; | `x` ;, style:x#35;, \\N\\G\\l, tab�here, }];{"##),
            "\(text)")
        #expect(text.contains(#"  "subgraph" [label="subgraph\nrequires \"\\", class="scene guarded"];"#))
        let reader = DOTReader(text)
        let scene = try #require(reader.nodes.first { $0.ids == ["graph"] })
        #expect(scene.attributes["label"]?.contains(#"a"b\c"#) == true)
        #expect(scene.attributes["label"]?.contains(#"\N\G\l"#) == true)
    }

    @Test(arguments: graphs().map(\.0))
    func theSameGraphGivesTheSameBytes(_ name: String) throws {
        let graph = try #require(Self.graphs().first { $0.0 == name }?.1)
        let again = try #require(Self.graphs().first { $0.0 == name }?.1)
        #expect(Diagram(graph: graph).rendered(as: .dot) == Diagram(graph: again).rendered(as: .dot))
    }

    @Test func theMediaTypeIsGraphvizs() {
        #expect(DiagramFormat.dot.mediaType == "text/vnd.graphviz; charset=utf-8")
    }
}
