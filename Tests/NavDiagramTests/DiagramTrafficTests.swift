import NavCore
import Testing

@testable import NavDiagram

/// A diagram drawn with traffic (docs/design.md, "Traffic and funnels"): views on scenes,
/// counts and pen widths on the links users followed, the other moves as edges of their own in
/// DOT; without traffic, the same bytes as ever.
@Suite struct DiagramTrafficTests {
    static let traffic = DiagramTraffic(
        views: ["top": 4, "list_news": 2, "show_news": 1],
        moves: [
            .init(from: "top", to: "list_news"): 2, .init(from: "list_news", to: "show_news"): 1,
            .init(from: "list_news", to: "top"): 1
        ])

    @Test func dotShowsViewsCountsAndTheMovesNoLinkDraws() throws {
        let graph = try #require(Graphs.news)
        let diagram = Diagram(graph: graph)
        let text = String(decoding: diagram.rendered(as: .dot, traffic: Self.traffic), as: UTF8.self)
        let reader = DOTReader(text)
        #expect(reader.unreadable.isEmpty, "\(reader.unreadable)")
        let top = try #require(reader.nodes.first { $0.ids[0] == "top" })
        #expect(top.attributes["label"]?.hasSuffix("\n4 views") == true, "\(top.attributes)")
        #expect(top.attributes["class"]?.split(separator: " ").contains("viewed") == true)
        let help = try #require(reader.nodes.first { $0.ids[0] == "help" })
        #expect(help.attributes["label"]?.contains("view") == false)
        // The link top → list_news, followed twice: the busiest, the widest pen.
        let news = try #require(reader.edges.first { $0.ids == ["top", "list_news"] })
        #expect(news.attributes["label"]?.hasSuffix("\n2 views") == true, "\(news.attributes)")
        #expect(news.attributes["penwidth"] == "6")
        #expect(news.attributes["class"]?.split(separator: " ").contains("traffic") == true)
        let show = try #require(reader.edges.first { $0.ids == ["list_news", "show_news"] })
        #expect(show.attributes["penwidth"] == "3.50")
        // Back from list_news to top is no link: an edge of its own.
        let back = try #require(reader.edges.first { $0.ids == ["list_news", "top"] })
        #expect(back.attributes["class"] == "edge traffic" && back.attributes["label"] == "1")
        // Without traffic: the drawing as before.
        #expect(diagram.rendered(as: .dot, traffic: nil) == diagram.rendered(as: .dot))
    }

    @Test func svgMarksViewedScenesAndFollowedLinks() throws {
        let graph = try #require(Graphs.news)
        let diagram = Diagram(graph: graph)
        let text = String(decoding: diagram.rendered(as: .svg, traffic: Self.traffic), as: UTF8.self)
        #expect(XMLCheck.problems(text).isEmpty, "\(XMLCheck.problems(text))")
        #expect(text.contains(#"<g class="scene start viewed" id="scene-top" data-scene="top" data-views="4">"#), "\(text)")
        #expect(text.contains(#"data-scene="help" data-views="0">"#))
        #expect(text.contains(#">4 views</text>"#))
        #expect(text.contains(#"data-from="top" data-to="list_news" data-link="news" data-count="2"><title>2 views</title>"#), "\(text)")
        #expect(text.contains(#"style="stroke-width: 6px""#))
        // The layout is the graph's: the boxes and routes are where they are without traffic.
        let plain = String(decoding: diagram.rendered(as: .svg), as: UTF8.self)
        #expect(plain.components(separatedBy: "<rect").count == text.components(separatedBy: "<rect").count)
        #expect(diagram.rendered(as: .svg, traffic: nil) == diagram.rendered(as: .svg))
    }
}
