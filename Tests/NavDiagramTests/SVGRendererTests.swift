import NavCore
import Testing

@testable import NavDiagram

/// The SVG document: well-formed, self-contained, with the classes and data attributes the
/// web client relies on, and every text escaped.
@Suite struct SVGRendererTests {
    static func svg(_ graph: Graph) -> String {
        String(decoding: Diagram(graph: graph).rendered(as: .svg), as: UTF8.self)
    }

    @Test(arguments: DiagramLayoutTests.graphs().map(\.0))
    func theDocumentIsWellFormedXML(_ name: String) throws {
        let graph = try #require(DiagramLayoutTests.graphs().first { $0.0 == name }?.1)
        let text = Self.svg(graph)
        #expect(XMLCheck.problems(text).isEmpty, "\(XMLCheck.problems(text))")
    }

    @Test func theNewsDocumentHasWhatAClientNeeds() throws {
        let graph = try #require(Graphs.news)
        let text = Self.svg(graph)
        #expect(text.hasPrefix(#"<svg xmlns="http://www.w3.org/2000/svg" class="navd-diagram" viewBox="0 0 "#))
        #expect(text.contains(#" width=""#) && text.contains(#" height=""#))
        for scene in graph.scenes.keys {
            #expect(text.components(separatedBy: #"id="scene-\#(scene)" data-scene="\#(scene)""#).count == 2, "\(scene) once")
        }
        #expect(text.contains(#"<g class="scene start" id="scene-top" data-scene="top">"#))
        #expect(text.contains(#"<g class="scene tabs" id="scene-home" data-scene="home">"#))
        #expect(text.contains(#"<g class="scene fixed" id="scene-onboarding" data-scene="onboarding">"#))
        #expect(text.contains(#"<g class="scene guarded" id="scene-profile" data-scene="profile">"#))
        #expect(text.contains(#"<g class="edge link segue-modal" data-from="top" data-to="list_coupon" data-link="coupons">"#))
        #expect(text.contains(#"<g class="edge link segue-push" data-from="top" data-to="list_news" data-link="news">"#))
        #expect(text.contains(#"<g class="edge tab" data-from="home" data-to="friend">"#))
        #expect(text.contains(#"<g class="edge global segue-modal" data-from="*" data-to="login" data-link="login">"#))
        #expect(text.contains(".navd-diagram .scene.current rect {"))
        #expect(text.contains("marker-end=\"url(#navd-arrow-link)\""))
        // Self-contained: no scripts, no links out, no external resources.
        for forbidden in ["<script", "href", "@import", "url(http", "<image", "<foreignObject", "javascript:"] {
            #expect(!text.contains(forbidden), "\(forbidden)")
        }
    }

    @Test func everyTextIsEscaped() throws {
        // Scene and link names are restricted by the graph's grammar; context keys are not.
        let graph = Graph(
            name: "g", start: "/a",
            scenes: ["a": Scene(name: "a", requires: ["<script>alert(\"x\")</script>", "a&b", "it's", "bell\u{7}"])]
        )
        let text = Self.svg(graph)
        #expect(XMLCheck.problems(text).isEmpty, "\(XMLCheck.problems(text))")
        #expect(!text.contains("<script"))
        #expect(text.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"))
        #expect(text.contains("a&amp;b") && text.contains("it&apos;s") && text.contains("bell\u{FFFD}"))
    }

    /// A name may be as long as the document: the box shows its start, the tooltip and
    /// `data-scene` the whole of it.
    @Test func aLongNameIsCutShortInItsBoxOnly() throws {
        let long = String(repeating: "n", count: 500)
        let graph = Graph(
            name: "g", start: "/a", scenes: ["a": Scene(name: "a", links: [long: Link(template: long)]), long: Scene(name: long)])
        let layout = DiagramLayout(Diagram(graph: graph))
        let box = try #require(layout.scenes.first { $0.title.hasPrefix("nnn") })
        #expect(box.title == String(repeating: "n", count: 47) + "…")
        #expect(box.rect.width <= (48 * 7.8 + 24).rounded(.up))
        #expect(layout.routes.first?.label?.text == String(repeating: "n", count: 31) + "…")
        let text = Self.svg(graph)
        #expect(text.contains(#"data-scene="\#(long)""#) && text.contains(#"data-link="\#(long)""#))
        #expect(text.contains("<title>\(long)</title>"))
        #expect(XMLCheck.problems(text).isEmpty)
    }

    @Test(arguments: [
        ("plain", "plain"), ("<>&\"'", "&lt;&gt;&amp;&quot;&apos;"), ("tab\tnew\nline", "tab\tnew\nline"),
        ("nul\u{0}esc\u{1B}", "nul\u{FFFD}esc\u{FFFD}"), ("\u{FFFE}\u{FFFF}", "\u{FFFD}\u{FFFD}"), ("日本 ✓", "日本 ✓")
    ])
    func xmlEscaping(_ text: String, _ escaped: String) {
        #expect(XMLText.escaped(text) == escaped)
    }

    @Test(arguments: [
        (0.0, "0"), (1.04, "1"), (1.05, "1.1"), (-0.04, "0"), (-0.06, "-0.1"), (-2.5, "-2.5"), (12345.678, "12345.7"), (Double.nan, "0")
    ])
    func numbersHaveAtMostOneDecimal(_ value: Double, _ text: String) {
        #expect(XMLText.number(value) == text)
    }

    /// Box widths come from the text: a longer name makes a wider box, wide characters count twice.
    @Test func boxesAreAsWideAsTheirText() {
        #expect(TextMetrics.width("abcd", fontSize: 13) == 4 * 0.6 * 13)
        #expect(TextMetrics.columns("日本") == 4)
        #expect(TextMetrics.truncated("abcdefgh", columns: 5) == "abcd…")
        #expect(TextMetrics.truncated("abc", columns: 5) == "abc")
        let long = String(repeating: "x", count: 40)
        let layout = DiagramLayout(Diagram(graph: Graph(name: "g", start: "/a", scenes: ["a": Scene(name: "a"), long: Scene(name: long)])))
        let widths = Dictionary(uniqueKeysWithValues: layout.scenes.map { ($0.title, $0.rect.width) })
        #expect((widths[long] ?? 0) >= 40 * 7.8 + 2 * 12)
        #expect((widths["a"] ?? 0) >= 56)
    }
}
