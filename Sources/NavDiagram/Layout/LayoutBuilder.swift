import NavCore

/// The steps of ``DiagramLayout``, in order, with what they share.
struct LayoutBuilder {
    typealias Box = DiagramLayout.Box
    typealias Route = DiagramLayout.Route
    typealias Label = DiagramLayout.Label

    let diagram: Diagram
    let metrics: DiagramLayout.Metrics
    /// The box each diagram edge leaves and enters (the "any screen" node for global links).
    private(set) var ends: [LayeredGraph.Edge] = []
    private var graph: LayeredGraph
    private var anyNode: Int?
    private var titles: [String] = []
    private var tags: [String?] = []
    /// Self-loops by box, in diagram order, and how far right of the box they reach.
    private var loops: [[Int]] = []
    private var loopReach: [Double] = []
    private var layerTop: [Double] = []
    private var layerHeight: [Double] = []

    private(set) var sceneBoxes: [Box] = []
    private(set) var anyBox: Box?
    private(set) var routes: [Route] = []
    private(set) var crossings = 0
    /// Where the line above the scenes nothing from the start reaches goes, if there are any.
    private(set) var separatorY: Double?

    init(diagram: Diagram, metrics: DiagramLayout.Metrics) {
        self.diagram = diagram
        self.metrics = metrics
        graph = LayeredGraph(boxWidths: [], boxHeights: [], rightExtra: [])
    }

    mutating func run() {
        makeBoxes()
        rank()
        crossings = graph.orderLayers()
        graph.placeHorizontally(spacing: metrics.spacing)
        placeVertically()
        sceneBoxes = diagram.scenes.indices.map(box)
        anyBox = anyNode.map(box)
        route()
        placeLabels()
    }

    // MARK: Boxes

    private mutating func makeBoxes() {
        var index: [String: Int] = [:]
        for (position, scene) in diagram.scenes.enumerated() {
            index[scene.name] = position
            titles.append(TextMetrics.truncated(scene.name, columns: metrics.maxTitleColumns))
            tags.append(scene.tagLine)
        }
        if diagram.hasGlobalLinks {
            anyNode = titles.count
            titles.append(Diagram.anyScreenTitle)
            tags.append(diagram.globalTagLine)
        }
        tags = tags.map { $0.map { TextMetrics.truncated($0, columns: metrics.maxTagColumns) } }
        ends = diagram.edges.map { edge in
            LayeredGraph.Edge(from: edge.from.flatMap { index[$0] } ?? anyNode ?? 0, to: index[edge.to] ?? 0)
        }

        loops = Array(repeating: [], count: titles.count)
        for (position, end) in ends.enumerated() where end.from == end.to { loops[end.from].append(position) }
        var widths: [Double] = []
        var heights: [Double] = []
        var extras: [Double] = []
        for box in titles.indices {
            let titleWidth = TextMetrics.width(titles[box], fontSize: metrics.nameFontSize) + 2 * metrics.paddingX
            let tagWidth = tags[box].map { TextMetrics.width($0, fontSize: metrics.smallFontSize) + 2 * metrics.paddingX } ?? 0
            widths.append(max(metrics.minBoxWidth, titleWidth, tagWidth).rounded(.up))
            heights.append(tags[box] == nil ? metrics.boxHeight : metrics.boxHeightWithTags)
            let reach = loops[box].isEmpty ? 0 : Self.loopReach(loops[box].count - 1)
            loopReach.append(reach)
            let labelWidth = loops[box].compactMap { labelSize(of: $0)?.width }.max() ?? 0
            extras.append(loops[box].isEmpty ? 0 : reach + 4 + labelWidth)
        }
        graph = LayeredGraph(boxWidths: widths, boxHeights: heights, rightExtra: extras)
    }

    /// How far right of its box the `index`th self-loop reaches.
    private static func loopReach(_ index: Int) -> Double {
        22 + 12 * Double(index)
    }

    private func box(_ node: Int) -> Box {
        let top = layerTop[graph.rank[node]] + (layerHeight[graph.rank[node]] - graph.height[node]) / 2
        return Box(
            rect: Rect(x: graph.x[node] - graph.width[node] / 2, y: top, width: graph.width[node], height: graph.height[node]),
            title: titles[node], tags: tags[node], rank: graph.rank[node]
        )
    }

    private func labelSize(of edge: Int) -> (text: String, width: Double)? {
        let kind = diagram.edges[edge].kind
        guard kind != .tab, let link = diagram.edges[edge].link ?? (kind == .redirect ? "redirect" : nil) else { return nil }
        let text = TextMetrics.truncated(link, columns: metrics.maxLabelColumns)
        return (text, TextMetrics.width(text, fontSize: metrics.smallFontSize) + 6)
    }

    // MARK: Ranks and coordinates

    private mutating func rank() {
        var successors = Array(repeating: [Int](), count: titles.count)
        var globalTargets: [Int] = []
        for (position, end) in ends.enumerated() {
            if diagram.edges[position].kind == .global {
                globalTargets.append(end.to)
            } else {
                successors[end.from].append(end.to)
            }
        }
        let sceneIndex = Dictionary(diagram.scenes.enumerated().map { ($1.name, $0) }) { first, _ in first }
        let startPath = diagram.startPath.compactMap { sceneIndex[$0] }
        graph.assignRanks(successors: successors, startPath: startPath, anyNode: anyNode, globalTargets: globalTargets)
        graph.addEdges(ends, dummyWidth: metrics.dummyWidth)
    }

    private mutating func placeVertically() {
        layerTop = []
        layerHeight = []
        var top = 0.0
        for (rank, layer) in graph.layers.enumerated() {
            if rank == graph.firstUnreachedRank, rank > 0 {
                // More room above the scenes only a deep path leads to, for the line between.
                top += metrics.separatorGap
                separatorY = top - (metrics.rankGap + metrics.separatorGap) / 2
            }
            let height = layer.map { graph.height[$0] }.max() ?? 0
            let band = max(height, metrics.boxHeight)
            layerTop.append(top)
            layerHeight.append(band)
            top += band + metrics.rankGap
        }
    }

    // MARK: Edges

    /// The side of a box an edge leaves or enters by.
    private enum Side { case top, bottom }

    private mutating func route() {
        let count = graph.nodeCount
        // Ports: for every box side, the edges there and the x of where each goes next.
        var sides: [Side: [[(edge: Int, toward: Double)]]] = [
            .top: Array(repeating: [], count: count), .bottom: Array(repeating: [], count: count)
        ]
        var flatGroups: [[Int]: [Int]] = [:]
        for (edge, shape) in graph.shapes.enumerated() {
            switch shape {
            case .layered(let chain, _):
                sides[.bottom]?[chain[0]].append((edge, graph.x[chain[1]]))
                sides[.top]?[chain[chain.count - 1]].append((edge, graph.x[chain[chain.count - 2]]))
            case .direct(let upper, let lower, _):
                sides[.bottom]?[upper].append((edge, graph.x[lower]))
                sides[.top]?[lower].append((edge, graph.x[upper]))
            case .flat:
                let end = ends[edge]
                let side = flatSide(end)
                flatGroups[[end.from, end.to], default: []].append(edge)
                sides[side]?[end.from].append((edge, graph.x[end.to]))
                sides[side]?[end.to].append((edge, graph.x[end.from]))
            case .selfLoop:
                break
            }
        }
        var ports: [Side: [Int: [Int: Double]]] = [.top: [:], .bottom: [:]]
        for side in [Side.top, .bottom] {
            for (node, list) in (sides[side] ?? []).enumerated() where !list.isEmpty {
                let sorted = list.sorted { $0.toward != $1.toward ? $0.toward < $1.toward : $0.edge < $1.edge }
                let span = min(graph.width[node] - 16, metrics.portSpacing * Double(sorted.count - 1))
                for (index, entry) in sorted.enumerated() {
                    let offset = sorted.count == 1 ? 0 : -span / 2 + span * Double(index) / Double(sorted.count - 1)
                    ports[side, default: [:]][entry.edge, default: [:]][node] = graph.x[node] + offset
                }
            }
        }
        func port(_ side: Side, _ edge: Int, _ node: Int) -> Double {
            ports[side]?[edge]?[node] ?? graph.x[node]
        }

        routes = []
        routes.reserveCapacity(ends.count)
        for (edge, shape) in graph.shapes.enumerated() {
            let path: PathGeometry
            switch shape {
            case .layered(let chain, let downwards):
                let first = chain[0]
                let last = chain[chain.count - 1]
                var current = Point(x: port(.bottom, edge, first), y: rect(first).maxY)
                var geometry = PathGeometry(start: current, segments: [])
                for dummy in chain.dropFirst().dropLast() {
                    let rank = graph.rank[dummy]
                    let enter = Point(x: graph.x[dummy], y: layerTop[rank])
                    geometry.segments.append(Self.gapCurve(from: current, to: enter))
                    current = Point(x: graph.x[dummy], y: layerTop[rank] + layerHeight[rank])
                    geometry.segments.append(.line(to: current))
                }
                geometry.segments.append(Self.gapCurve(from: current, to: Point(x: port(.top, edge, last), y: rect(last).y)))
                path = downwards ? geometry : geometry.reversed
            case .direct(let upper, let lower, let downwards):
                let start = Point(x: port(.bottom, edge, upper), y: rect(upper).maxY)
                let geometry = PathGeometry(
                    start: start, segments: [Self.gapCurve(from: start, to: Point(x: port(.top, edge, lower), y: rect(lower).y))])
                path = downwards ? geometry : geometry.reversed
            case .flat:
                let end = ends[edge]
                let group = flatGroups[[end.from, end.to]] ?? [edge]
                path = flatPath(edge, end, index: group.firstIndex(of: edge) ?? 0, port: port)
            case .selfLoop:
                let node = ends[edge].from
                let box = rect(node)
                let index = loops[node].firstIndex(of: edge) ?? 0
                let reach = Self.loopReach(index) / 0.75
                let dy = 5 + 2 * Double(index)
                path = PathGeometry(
                    start: Point(x: box.maxX, y: box.midY - dy),
                    segments: [
                        .curve(
                            Point(x: box.maxX + reach, y: box.midY - dy - reach * 0.5),
                            Point(x: box.maxX + reach, y: box.midY + dy + reach * 0.5),
                            to: Point(x: box.maxX, y: box.midY + dy)
                        )
                    ]
                )
            }
            routes.append(Route(path: path, label: nil))
        }
    }

    private func rect(_ node: Int) -> Rect {
        let top = layerTop[graph.rank[node]] + (layerHeight[graph.rank[node]] - graph.height[node]) / 2
        return Rect(x: graph.x[node] - graph.width[node] / 2, y: top, width: graph.width[node], height: graph.height[node])
    }

    /// The side of its boxes an edge within a rank leaves and enters by: edges to the right
    /// arc over the rank, edges to the left under it, so that edges both ways stay apart.
    private func flatSide(_ end: LayeredGraph.Edge) -> Side {
        graph.x[end.from] < graph.x[end.to] ? .top : .bottom
    }

    /// An edge within a rank: an arc over the rank (rightwards) or under it (leftwards),
    /// higher the farther apart its boxes are; parallel ones one above the other.
    private func flatPath(_ edge: Int, _ end: LayeredGraph.Edge, index: Int, port: (Side, Int, Int) -> Double) -> PathGeometry {
        let from = rect(end.from)
        let to = rect(end.to)
        let side = flatSide(end)
        let start = Point(x: port(side, edge, end.from), y: side == .top ? from.y : from.maxY)
        let finish = Point(x: port(side, edge, end.to), y: side == .top ? to.y : to.maxY)
        let rise = min(metrics.rankGap * 0.45, 14 + 0.06 * abs(finish.x - start.x) + 8 * Double(index)) / 0.75
        let apex = side == .top ? min(start.y, finish.y) - rise : max(start.y, finish.y) + rise
        return PathGeometry(start: start, segments: [.curve(Point(x: start.x, y: apex), Point(x: finish.x, y: apex), to: finish)])
    }

    /// A curve across the gap between two ranks, leaving and arriving vertically.
    private static func gapCurve(from start: Point, to end: Point) -> PathSegment {
        let bend = (end.y - start.y) * 0.5
        return .curve(Point(x: start.x, y: start.y + bend), Point(x: end.x, y: end.y - bend), to: end)
    }

    // MARK: Labels

    /// Gives every labelled edge the first spot, of a few along its path near where it
    /// starts, that overlaps no box and no label placed before it; or the first spot, when
    /// none is free.
    private mutating func placeLabels() {
        var index = RectIndex(cellSize: 64)
        for box in sceneBoxes { index.insert(box.rect) }
        if let anyBox { index.insert(anyBox.rect) }
        let height = metrics.labelHeight
        for edge in routes.indices {
            guard let size = labelSize(of: edge) else { continue }
            let text = size.text
            let width = size.width
            var candidates: [Rect] = []
            if case .selfLoop = graph.shapes[edge] {
                let node = ends[edge].from
                let box = rect(node)
                let position = Double(loops[node].firstIndex(of: edge) ?? 0) - Double(loops[node].count - 1) / 2
                candidates = [
                    Rect(x: box.maxX + loopReach[node] + 4, y: box.midY + position * height - height / 2, width: width, height: height)
                ]
            } else {
                let path = routes[edge].path
                var points = [path.start]
                for segment in path.segments { points.append(segment.end) }
                // The curved pieces cross the gaps between ranks, where labels go: the first
                // three from the edge's start, and the last.
                var pieces = path.segments.indices.filter { if case .curve = path.segments[$0] { true } else { false } }
                if pieces.isEmpty { pieces = Array(path.segments.indices) }
                if pieces.count > 4 { pieces = Array(pieces.prefix(3)) + [pieces[pieces.count - 1]] }
                for piece in pieces {
                    for t in [0.5, 0.32, 0.68, 0.18, 0.82] {
                        let anchor = path.segments[piece].point(at: t, from: points[piece])
                        candidates.append(Rect(center: anchor, width: width, height: height))
                        candidates.append(Rect(center: anchor.offset(width / 2 + 4, 0), width: width, height: height))
                        candidates.append(Rect(center: anchor.offset(-width / 2 - 4, 0), width: width, height: height))
                    }
                }
            }
            guard let first = candidates.first else { continue }
            let chosen = candidates.first { !index.intersects($0) } ?? first
            index.insert(chosen)
            routes[edge].label = Label(text: text, rect: chosen)
        }
    }
}
