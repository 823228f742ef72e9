import Foundation
import NavCore
import Testing

@testable import NavDiagram

/// The layered layout: every scene once, boxes apart, edges from box to box, the same bytes
/// every time, and a bounded cost.
@Suite struct DiagramLayoutTests {
    static let generated: [(seed: UInt64, scenes: Int, links: Int)] = [
        (1, 1, 0), (2, 2, 3), (3, 12, 20), (4, 40, 90), (5, 120, 300), (6, 300, 260), (7, 25, 200)
    ]

    static func graphs() -> [(String, Graph)] {
        var result: [(String, Graph)] = []
        if let news = Graphs.news { result.append(("news", news)) }
        if let kabukit = Graphs.kabukit { result.append(("kabukit", kabukit)) }
        for (seed, scenes, links) in generated {
            result.append(
                ("random seed \(seed): \(scenes) scenes, \(links) links", Graphs.random(seed: seed, scenes: scenes, links: links)))
        }
        return result
    }

    @Test func theExamplesAndGeneratedGraphsLoad() {
        #expect(Self.graphs().count == 2 + Self.generated.count)
        #expect(Self.graphs().allSatisfy { !$0.1.name.hasPrefix("invalid") }, "\(Self.graphs().map(\.1.name))")
    }

    @Test(arguments: graphs().map(\.0))
    func everySceneIsOneBoxAndNoTwoBoxesOverlap(_ name: String) throws {
        let graph = try #require(Self.graphs().first { $0.0 == name }?.1)
        let diagram = Diagram(graph: graph)
        let layout = DiagramLayout(diagram)
        #expect(layout.scenes.count == graph.scenes.count)
        #expect(Set(layout.scenes.map(\.title)) == Set(graph.scenes.keys))
        #expect((layout.anyScreen != nil) == diagram.hasGlobalLinks)
        let boxes = layout.scenes.map(\.rect) + (layout.anyScreen.map { [$0.rect] } ?? [])
        #expect(Self.overlappingPairs(boxes).isEmpty, "\(Self.overlappingPairs(boxes).prefix(3))")
        for box in boxes {
            #expect(
                box.x >= 0 && box.y >= 0 && box.maxX <= layout.width && box.maxY <= layout.height,
                "\(box) outside \(layout.width)×\(layout.height)")
        }
    }

    @Test(arguments: graphs().map(\.0))
    func everyEdgeLeavesItsSourceBoxAndEndsOnItsTargetBox(_ name: String) throws {
        let graph = try #require(Self.graphs().first { $0.0 == name }?.1)
        let diagram = Diagram(graph: graph)
        let layout = DiagramLayout(diagram)
        #expect(layout.routes.count == diagram.edges.count)
        let boxes = Dictionary(uniqueKeysWithValues: zip(diagram.scenes.map(\.name), layout.scenes.map(\.rect)))
        for (edge, route) in zip(diagram.edges, layout.routes) {
            let source = try #require(edge.from.map { boxes[$0] } ?? layout.anyScreen?.rect)
            let target = try #require(boxes[edge.to])
            #expect(source.hasOnOutline(route.path.start), "\(edge): starts at \(route.path.start), not on \(source)")
            #expect(target.hasOnOutline(route.path.end), "\(edge): ends at \(route.path.end), not on \(target)")
            #expect(!route.path.segments.isEmpty)
            // A link is labelled with its name; a redirect is labelled so.
            if edge.kind != .tab { #expect(route.label?.text == edge.link ?? (edge.kind == .redirect ? "redirect" : nil)) }
        }
    }

    /// News has room for every label: none sits on another or on a box.
    @Test(arguments: ["news", "kabukit"])
    func labelsDoNotSitOnEachOtherOrOnBoxes(_ name: String) throws {
        let graph = try #require(Self.graphs().first { $0.0 == name }?.1)
        let layout = DiagramLayout(Diagram(graph: graph))
        let labels = layout.routes.compactMap { $0.label?.rect }
        #expect(!labels.isEmpty)
        let boxes = layout.scenes.map(\.rect) + (layout.anyScreen.map { [$0.rect] } ?? [])
        #expect(Self.overlappingPairs(labels + boxes).isEmpty, "\(Self.overlappingPairs(labels + boxes))")
    }

    /// Ranks follow the start: the any-screen node alone on top, the start scene below it, what
    /// it leads to (and global links' targets) next; scenes nothing reaches come last.
    @Test func newsIsRankedFromItsStartScene() throws {
        let layout = DiagramLayout(Diagram(graph: try #require(Graphs.news)))
        let rank = Dictionary(uniqueKeysWithValues: layout.scenes.map { ($0.title, $0.rank) })
        #expect(layout.anyScreen?.rank == 0)
        #expect(rank["top"] == 1)
        #expect(rank["list_news"] == 2 && rank["list_coupon"] == 2 && rank["login"] == 2)
        #expect(rank["show_news"] == 3)
        for unreached in ["home", "help", "onboarding", "show_coupon", "show_friend"] {
            #expect(rank[unreached] == 4, "\(unreached)")
        }
        #expect(rank["friend"] == 5 && rank["profile"] == 5, "tabs are below their unreached container")
    }

    @Test func aSelfLoopLeavesAndEntersItsBoxsRightSide() throws {
        let diagram = Diagram(graph: try #require(Graphs.kabukit))
        let layout = DiagramLayout(diagram)
        let loops = zip(diagram.edges, layout.routes).filter { $0.0.from == $0.0.to }
        #expect(loops.count >= 2)
        for (edge, route) in loops {
            let box = try #require(layout.scenes.first { $0.title == edge.to }?.rect)
            #expect(abs(route.path.start.x - box.maxX) < 0.01 && abs(route.path.end.x - box.maxX) < 0.01)
            #expect(route.path.start.y < route.path.end.y)
        }
    }

    @Test(arguments: graphs().map(\.0))
    func theSameGraphGivesTheSameBytes(_ name: String) throws {
        let graph = try #require(Self.graphs().first { $0.0 == name }?.1)
        let first = Diagram(graph: graph).rendered(as: .svg)
        #expect(Diagram(graph: graph).rendered(as: .svg) == first)
        // The same graph built with every dictionary filled in the other order.
        var rebuilt = Graph(name: graph.name, start: graph.start, scenes: [:])
        for name in graph.scenes.keys.sorted().reversed() {
            guard var scene = graph.scenes[name] else { continue }
            var links: [String: Link] = [:]
            for link in scene.links.keys.sorted().reversed() { links[link] = scene.links[link] }
            scene.links = links
            rebuilt.scenes[name] = scene
        }
        for link in graph.links.keys.sorted().reversed() { rebuilt.links[link] = graph.links[link] }
        #expect(Diagram(graph: rebuilt).rendered(as: .svg) == first)
    }

    /// Crossing reduction finds the obvious order: two parallel chains drawn side by side.
    @Test func crossingReductionUncrossesParallelChains() {
        var scenes: [String: Scene] = ["root": Scene(name: "root", links: ["a": Link(template: "b1"), "b": Link(template: "a1")])]
        scenes["a1"] = Scene(name: "a1", links: ["next": Link(template: "b2")])
        scenes["b1"] = Scene(name: "b1", links: ["next": Link(template: "a2")])
        scenes["a2"] = Scene(name: "a2")
        scenes["b2"] = Scene(name: "b2")
        let layout = DiagramLayout(Diagram(graph: Graph(name: "g", start: "/root", scenes: scenes)))
        #expect(layout.crossings == 0)
    }

    /// Crossings are counted per pair of adjacent ranks; sweeps remove them.
    @Test func crossingsAreCountedAndSweptAway() {
        var graph = LayeredGraph(
            boxWidths: [60, 60, 60, 60, 60, 60], boxHeights: Array(repeating: 30, count: 6), rightExtra: Array(repeating: 0, count: 6))
        graph.rank = [0, 0, 0, 1, 1, 1]
        // 0→5, 1→4, 2→3: three pairs cross when both ranks keep their index order.
        graph.addEdges([.init(from: 0, to: 5), .init(from: 1, to: 4), .init(from: 2, to: 3)], dummyWidth: 8)
        graph.layers = [[0, 1, 2], [3, 4, 5]]
        graph.position = [0, 1, 2, 0, 1, 2]
        #expect(graph.crossings() == 3)
        #expect(graph.orderLayers() == 0)
    }

    /// The placement's solver: the closest non-decreasing sequence in weighted least squares.
    @Test func poolingAdjacentViolators() {
        #expect(LayeredGraph.pooled([(1, 1), (2, 1), (3, 1)]) == [1, 2, 3])
        #expect(LayeredGraph.pooled([(3, 1), (1, 1)]) == [2, 2])
        #expect(LayeredGraph.pooled([(4, 3), (0, 1), (5, 1)]) == [3, 3, 5])
    }

    /// A long back edge gets a lane through every rank it crosses; past the budget, edges are drawn directly.
    @Test func longEdgesGetLanesWithinTheBudget() {
        var graph = LayeredGraph(boxWidths: [60, 60], boxHeights: [30, 30], rightExtra: [0, 0])
        graph.rank = [0, 5]
        graph.addEdges([.init(from: 1, to: 0)], dummyWidth: 8)
        #expect(graph.nodeCount == 6)
        #expect(graph.shapes == [.layered(chain: [0, 2, 3, 4, 5, 1], downwards: false)])
        var wide = LayeredGraph(boxWidths: [60, 60], boxHeights: [30, 30], rightExtra: [0, 0])
        wide.rank = [0, LayeredGraph.dummyBudget + 2]
        wide.addEdges([.init(from: 0, to: 1)], dummyWidth: 8)
        #expect(wide.shapes == [.direct(upper: 0, lower: 1, downwards: true)])
        #expect(wide.nodeCount == 2)
    }

    /// The largest graph a default daemon takes (a 64 KiB document holds at most about 8,000
    /// scenes) with many links lays out in bounded time. The release build's time is in
    /// ``DiagramLayout``'s documentation; this debug-build bound only catches a blow-up.
    @Test func theLargestGraphLaysOutInBoundedTime() throws {
        let graph = Graphs.random(seed: 42, scenes: 8_000, links: 8_000, globals: 20)
        #expect(graph.scenes.count == 8_000)
        let clock = ContinuousClock()
        var bytes: [UInt8] = []
        let elapsed = clock.measure { bytes = Diagram(graph: graph).rendered(as: .svg) }
        print("diagram of 8,000 scenes and 8,000 links: \(elapsed), \(bytes.count) bytes of SVG")
        #expect(elapsed < .seconds(60))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.components(separatedBy: " data-scene=\"").count - 1 == 8_000)
    }

    /// Pairs of rectangles that overlap, found through a grid.
    static func overlappingPairs(_ rects: [Rect]) -> [(Rect, Rect)] {
        var cells: [[Int]: [Int]] = [:]
        var pairs: [(Rect, Rect)] = []
        var seen: Set<[Int]> = []
        for (index, rect) in rects.enumerated() {
            for column in Int(rect.x / 200)...Int(rect.maxX / 200) {
                for row in Int(rect.y / 200)...Int(rect.maxY / 200) {
                    for other in cells[[column, row]] ?? [] where rects[other].intersects(rect) {
                        if seen.insert([other, index]).inserted { pairs.append((rects[other], rect)) }
                    }
                    cells[[column, row], default: []].append(index)
                }
            }
        }
        return pairs
    }
}
