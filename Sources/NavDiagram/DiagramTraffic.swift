/// What users did with a graph, for a diagram to draw (docs/design.md, "Traffic and funnels"):
/// views by scene and by the pair of scenes before and after. Counted elsewhere (the feed); the
/// diagram only draws them.
public struct DiagramTraffic: Sendable, Hashable {
    public struct Move: Sendable, Hashable, Comparable {
        public var from: String
        public var to: String

        public init(from: String, to: String) {
            self.from = from
            self.to = to
        }

        public static func < (a: Move, b: Move) -> Bool { (a.from, a.to) < (b.from, b.to) }
    }

    /// Views by scene.
    public var views: [String: Int]
    /// Views by the scene before and the scene viewed.
    public var moves: [Move: Int]

    public init(views: [String: Int], moves: [Move: Int]) {
        self.views = views
        self.moves = moves
    }

    /// The most views of one move (at least 1), what pen widths are scaled to.
    var busiest: Int { max(1, moves.values.max() ?? 1) }

    /// A pen width from 1 to 6, growing with `count`'s share of the busiest move.
    func penWidth(_ count: Int) -> Double {
        1 + 5 * Double(count) / Double(busiest)
    }

    /// `N views`, or `1 view`.
    static func viewsText(_ count: Int) -> String {
        count == 1 ? "1 view" : "\(count) views"
    }

    /// The moves no edge of `diagram` draws (back to an earlier scene, a deep link), busiest first.
    func undrawn(in diagram: Diagram) -> [(Move, Int)] {
        let drawn = Set(diagram.edges.compactMap { edge in edge.from.map { Move(from: $0, to: edge.to) } })
        let names = Set(diagram.scenes.map(\.name))
        return moves.filter { !drawn.contains($0.key) && names.contains($0.key.from) && names.contains($0.key.to) }
            .sorted { ($1.value, $0.key) < ($0.value, $1.key) }
    }

    /// The views of the move an edge draws; nil for an edge that no view followed (or from any screen).
    func count(of edge: Diagram.Edge) -> Int? {
        guard let from = edge.from, let count = moves[Move(from: from, to: edge.to)], count > 0 else { return nil }
        return count
    }
}

extension Diagram {
    /// The diagram drawn with `traffic`: each scene's views and each followed edge's count.
    public func rendered(as format: DiagramFormat, traffic: DiagramTraffic?) -> [UInt8] {
        guard let traffic else { return rendered(as: format) }
        switch format {
        case .svg: return SVGRenderer(diagram: self, layout: DiagramLayout(self), traffic: traffic).render()
        case .dot: return DOTRenderer(diagram: self, traffic: traffic).render()
        case .mermaid: return MermaidRenderer(diagram: self).render()
        }
    }
}
