import Foundation
import NavCore
import Testing

@testable import NavDiagram

/// The Mermaid flowchart: safe node ids, every scene and edge, quoted and escaped labels,
/// the same bytes for the same graph.
@Suite struct MermaidRendererTests {
    static func mermaid(_ graph: Graph) -> String {
        String(decoding: Diagram(graph: graph).rendered(as: .mermaid), as: UTF8.self)
    }

    /// A label read back as Mermaid shows it: entity codes decoded, `<br/>` a line break.
    static func unescaped(_ label: Substring) -> String {
        var text = String(label).replacingOccurrences(of: "<br/>", with: "\n")
        for (code, character) in [
            ("#quot;", "\""), ("#35;", "#"), ("#lt;", "<"), ("#gt;", ">"), ("#124;", "|"), ("#96;", "`"), ("#amp;", "&")
        ] {
            text = text.replacingOccurrences(of: code, with: character)
        }
        return text
    }

    @Test(arguments: [
        ("top", "s_top"), ("end", "s_end"), ("graph", "s_graph"), ("list_news", "s_list__news"),
        ("1st.scene-name_x", "s_1st_oscene_hname__x"), ("a_o", "s_a__o"), ("a.", "s_a_o"), ("é", "s__ue9_")
    ])
    func nodeIDsAreSafe(_ scene: String, _ id: String) {
        #expect(MermaidText.nodeID(scene) == id)
    }

    @Test(arguments: DOTRendererTests.graphs().map(\.0))
    func everySceneAndEdgeIsThereAsWritten(_ name: String) throws {
        let graph = try #require(DOTRendererTests.graphs().first { $0.0 == name }?.1)
        let diagram = Diagram(graph: graph)
        let text = Self.mermaid(graph)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "flowchart TB")

        // Nodes: `ID["label"]` (or `(["label"])` for any screen), no raw quote inside a label.
        let node = /^  ([A-Za-z0-9_]+)\(?\["([^"]*)"\]\)?$/
        let nodes = lines.compactMap { try? node.wholeMatch(in: $0) }
        var expected = diagram.scenes.map {
            (MermaidText.nodeID($0.name), ([$0.name] + ($0.tagLine.map { [$0] } ?? [])).map(\.controlsReplaced).joined(separator: "\n"))
        }
        if diagram.hasGlobalLinks {
            expected.append(
                (MermaidText.anyScreenID, ([Diagram.anyScreenTitle] + (diagram.globalTagLine.map { [$0] } ?? [])).joined(separator: "\n")))
        }
        #expect(nodes.map { String($0.1) } == expected.map(\.0))
        #expect(nodes.map { Self.unescaped($0.2) } == expected.map(\.1))
        #expect(Set(nodes.map { String($0.1) }).count == nodes.count, "two scenes share a node id")

        // Edges, in the diagram's order (linkStyle names them by index).
        let edge = /^  ([A-Za-z0-9_]+) (-\.-|-->|-\.->|==>)(?:\|"([^"]*)"\|)? ([A-Za-z0-9_]+)$/
        let edges = lines.compactMap { try? edge.wholeMatch(in: $0) }
        #expect(edges.count == diagram.edges.count)
        for (edge, read) in zip(diagram.edges, edges) {
            #expect(String(read.1) == edge.from.map(MermaidText.nodeID) ?? MermaidText.anyScreenID)
            #expect(String(read.4) == MermaidText.nodeID(edge.to))
            switch edge.kind {
            case .tab:
                #expect(read.2 == "-.-" && read.3 == nil)
            case .link, .global:
                #expect(read.3.map(Self.unescaped) == "\(edge.link ?? "")\n\(edge.template ?? "")")
                #expect(read.2 == (edge.segue == .push ? "-->" : edge.segue == .modal ? "-.->" : "==>"))
            case .redirect:
                #expect(read.3.map(Self.unescaped) == "redirect\n\(edge.template ?? "")")
                #expect(read.2 == "-.->")
            }
        }
        // Nothing else but the comment, class definitions, class assignments and link styles.
        for line in lines.dropFirst() {
            let known =
                (try? node.wholeMatch(in: line)) != nil || (try? edge.wholeMatch(in: line)) != nil
                || ["  %% ", "  classDef ", "  class ", "  linkStyle "].contains { line.hasPrefix($0) }
            #expect(known, "\(line)")
        }
    }

    @Test func theNewsDocument() throws {
        let text = Self.mermaid(try #require(Graphs.news))
        #expect(text.contains("\n  s_top[\"top<br/>start\"]\n"))
        #expect(text.contains("\n  s_home[\"home<br/>tabs\"]\n"))
        #expect(text.contains("\n  any_screen([\"any screen\"])\n"))
        #expect(text.contains("\n  s_home -.- s_friend\n"))
        #expect(text.contains("\n  s_top -.->|\"coupons<br/>!/list_coupon\"| s_list__coupon\n"))
        #expect(text.contains("\n  s_top -->|\"news<br/>list_news(category={category})\"| s_list__news\n"))
        #expect(text.contains("\n  any_screen -.->|\"login<br/>!login\"| s_login\n"))
        #expect(text.contains("\n  class s_top start\n  classDef tabs") || text.contains("\n  class s_top start\n"))
        #expect(text.contains("\n  class s_onboarding fixed\n"))
        #expect(text.contains("\n  class s_profile,s_settings guarded\n"))
        #expect(text.contains("\n  s_settings -.->|\"redirect<br/>!login\"| s_login\n"))
        #expect(text.contains("\n  s_edit__profile[\"edit_profile<br/>asks before leaving\"]\n"))
        #expect(text.contains("\n  linkStyle 7 stroke:#c05621,color:#c05621\n"))
        #expect(text.contains("\n  linkStyle 0,1 stroke:#8fa0b6,stroke-width:2px\n"))
        #expect(text.contains("\n  linkStyle 5,6 stroke:#2b6cb0,color:#2b6cb0\n"))
    }

    @Test func everyTextIsEscaped() throws {
        let text = Self.mermaid(try #require(Graphs.awkward))
        #expect(
            text.contains(#"requires a#quot;b\c, line�break, #lt;b#gt;#amp;amp;#lt;/b#gt;, #35;quot; #124; #96;x#96; ;, style:x#35;35;"#),
            "\(text)")
        #expect(text.contains("\n  s_subgraph[\"subgraph<br/>requires #quot;\\\"]\n"))
        // Keywords are never ids.
        for keyword in ["end", "graph", "subgraph", "style", "class", "click"] {
            #expect(!text.contains("\n  \(keyword)["))
        }
    }

    @Test(arguments: DOTRendererTests.graphs().map(\.0))
    func theSameGraphGivesTheSameBytes(_ name: String) throws {
        let graph = try #require(DOTRendererTests.graphs().first { $0.0 == name }?.1)
        let again = try #require(DOTRendererTests.graphs().first { $0.0 == name }?.1)
        #expect(Diagram(graph: graph).rendered(as: .mermaid) == Diagram(graph: again).rendered(as: .mermaid))
    }
}
