import NavCore
import Testing

@testable import NavDiagram

/// The model a diagram is drawn from: what the graph says, nothing laid out.
@Suite struct DiagramTests {
    @Test func theNewsDiagramHasEverySceneTabAndLink() throws {
        let diagram = Diagram(graph: try #require(Graphs.news))
        #expect(diagram.name == "news")
        #expect(diagram.startPath == ["top"])
        #expect(diagram.scenes.map(\.name) == diagram.scenes.map(\.name).sorted())
        #expect(diagram.scenes.count == 15)
        let edges = diagram.edges.map { "\($0.kind) \($0.from ?? "*") \($0.segue.rawValue)\($0.to) \($0.link ?? "-")" }
        #expect(
            edges == [
                "tab home #friend -", "tab home #profile -",
                "link list_news /show_news show", "link top !list_coupon coupons", "link top /list_news news",
                "global * !login login", "global * /top top", "redirect settings !login -"
            ])
        let top = try #require(diagram.scenes.first { $0.name == "top" })
        #expect(top.onStartPath && top.tagLine == "start")
        #expect(diagram.scenes.first { $0.name == "home" }?.tagLine == "tabs")
        #expect(diagram.scenes.first { $0.name == "onboarding" }?.tagLine == "not removable")
        #expect(diagram.scenes.first { $0.name == "profile" }?.tagLine == "requires user")
        #expect(diagram.scenes.first { $0.name == "help" }?.tagLine == nil)
        #expect(diagram.hasGlobalLinks)
    }

    /// A link points at the last named component of its path, whatever comes before it; a path
    /// naming no scene is a stub, listed by name.
    @Test(arguments: [
        ("show_news(id={id})", "show_news", Segue.push),
        ("!/list_coupon", "list_coupon", .modal),
        ("^/top#home", "home", .tab),
        ("../b!c", "c", .modal),
        ("^/a/b/c", "c", .push)
    ])
    func aLinkLeadsToTheLastSceneOfItsPath(template: String, target: String, segue: Segue) throws {
        let graph = Graph(
            name: "g", start: "/a",
            scenes: [
                "a": Scene(name: "a", links: ["go": Link(template: template)]), "b": Scene(name: "b"), "c": Scene(name: "c"),
                "top": Scene(name: "top", kind: .tabs(["home"])), "home": Scene(name: "home"),
                "show_news": Scene(name: "show_news"), "list_coupon": Scene(name: "list_coupon")
            ]
        )
        let edge = try #require(Diagram(graph: graph).edges.first { $0.kind == .link })
        #expect(edge.from == "a" && edge.to == target && edge.segue == segue && edge.link == "go" && edge.template == template)
    }

    @Test func linksThatNameNoSceneAreStubs() {
        let graph = Graph(
            name: "g", start: "/a",
            scenes: ["a": Scene(name: "a", links: ["close": Link(template: ".."), "up2": Link(template: "up(n=2)")])],
            links: ["back": Link(template: "..")]
        )
        let diagram = Diagram(graph: graph)
        #expect(diagram.edges.isEmpty)
        #expect(diagram.scenes[0].stubs == [Diagram.Stub(link: "close", template: ".."), Diagram.Stub(link: "up2", template: "up(n=2)")])
        #expect(diagram.scenes[0].tagLine == "start · close → .. · up2 → up(n=2)")
        #expect(diagram.globalStubs == [Diagram.Stub(link: "back", template: "..")])
        #expect(diagram.hasGlobalLinks, "the stub is shown on the any-screen node")
    }

    /// Every scene of a start path is marked, not only the first.
    @Test func theWholeStartPathIsMarked() {
        let graph = Graph(
            name: "g", start: "/top#home",
            scenes: ["top": Scene(name: "top", kind: .tabs(["home", "news"])), "home": Scene(name: "home"), "news": Scene(name: "news")]
        )
        let diagram = Diagram(graph: graph)
        #expect(diagram.startPath == ["top", "home"])
        #expect(diagram.scenes.filter(\.onStartPath).map(\.name) == ["home", "top"])
    }
}
