import NavCore

/// Where everything of a ``Diagram`` is drawn: a layered (Sugiyama-style) layout, computed
/// without I/O and deterministically (the same diagram gives the same layout, to the bit).
///
/// 1. **Ranks** by breadth-first search from the start path over tabs and links
///    (``LayeredGraph/assignRanks(successors:startPath:anyNode:globalTargets:)``); global links
///    leave an "any screen" node above everything; scenes nothing reaches start a rank after
///    the last.
/// 2. **Long edges** get a dummy node in every rank they cross (a lane of their own), up to
///    ``LayeredGraph/dummyBudget``; edges that point upwards (back edges) are laid out like the
///    others and drawn reversed; edges within a rank are arcs, edges to the same scene loops.
/// 3. **Crossing reduction**: barycenter sweeps, at most ``LayeredGraph/maxSweeps``, keeping
///    the order with the fewest crossings.
/// 4. **Coordinates**: ranks top to bottom, each node as close to its neighbours' mean as the
///    order and gaps allow (``LayeredGraph/placeHorizontally(spacing:)``).
/// 5. **Edges** leave the bottom of the upper box and enter the top of the lower one at ports
///    spread along the side in the order of where they go, as curves through their lanes;
///    **labels** take the first free spot of a few along their edge.
///
/// Cost: linear in the scenes, links and dummies for ranking, ports and labels (labels use a
/// grid of cells), O((V + D + E) log V) per sweep for ordering and placement, with both sweep
/// counts fixed and the dummies D at most ``LayeredGraph/dummyBudget``; names and labels are
/// cut short, so no box grows with a name. The graph has no scene limit of its own: a 64 KiB
/// upload (the default `--max-body`) holds at most about 8,000 scenes without links. Measured
/// in a release build (`swift run -c release --package-path Benchmarks navcore-bench draw`) on
/// the 2-core development machine while other builds ran (load average 5):
///
/// | graph | layout | layout and SVG |
/// | --- | --- | --- |
/// | 8,000 scenes, 8,000 random links (more than 64 KiB holds; 4.2 MB of SVG) | 71 ms | 126 ms |
/// | a chain of 4,000 scenes, each linking back to the start (4,000 back edges, past the dummy budget) | 102 ms | 219 ms |
/// | the news example (12 scenes) | 0.07 ms | 0.15 ms |
///
/// A debug build takes about ten times as long. The daemon keeps drawings by graph version
/// (`DiagramCache`), so a diagram is laid out once, not on every request.
public struct DiagramLayout: Sendable {
    /// Sizes of the drawing, in pixels.
    struct Metrics: Sendable {
        var nameFontSize = 13.0
        var smallFontSize = 11.0
        var paddingX = 12.0
        var boxHeight = 30.0
        var boxHeightWithTags = 46.0
        var minBoxWidth = 56.0
        /// Longest tag line, in columns, before it is cut short.
        var maxTagColumns = 48
        /// Longest scene name and link label drawn, in columns (the whole name is in the
        /// scene's tooltip and `data-scene`): a name may be as long as the document, and
        /// neither a box nor the layout's work should grow with it.
        var maxTitleColumns = 48
        var maxLabelColumns = 32
        var rankGap = 80.0
        /// Extra room above the scenes nothing from the start reaches.
        var separatorGap = 24.0
        var spacing = LayeredGraph.Spacing(boxes: 28, boxAndDummy: 14, dummies: 10)
        var dummyWidth = 8.0
        var margin = 20.0
        var labelHeight = 14.0
        /// Gap between ports on one side of a box.
        var portSpacing = 12.0
    }

    /// A box: a scene, or the "any screen" node.
    struct Box: Sendable, Hashable {
        var rect: Rect
        var title: String
        /// The small line under the title: start, tabs, not removable, requires, links without a scene.
        var tags: String?
        var rank: Int
    }

    /// An edge label and the rectangle it takes.
    struct Label: Sendable, Hashable {
        var text: String
        var rect: Rect
    }

    /// How an edge is drawn.
    struct Route: Sendable, Hashable {
        var path: PathGeometry
        var label: Label?
    }

    /// One entry of the legend under the drawing.
    struct LegendEntry: Sendable, Hashable {
        enum Sample: Sendable, Hashable {
            case edge(Diagram.EdgeKind, Segue)
            case startScene
        }

        var sample: Sample
        var text: String
        /// Where the sample starts, on the entry's middle line.
        var origin: Point
    }

    static let legendSampleWidth = 30.0
    /// What the line above the scenes nothing from the start reaches says.
    static let separatorCaption = "below: scenes no link or tab from the start reaches (open them by deep path)"

    /// The line above the scenes nothing from the start reaches: its height and its caption's
    /// baseline start.
    struct Separator: Sendable, Hashable {
        var y: Double
        var caption: Point
    }

    let metrics: Metrics
    /// The scenes' boxes, in the order of ``Diagram/scenes``.
    private(set) var scenes: [Box] = []
    /// The "any screen" box global links leave from, when there are global links.
    private(set) var anyScreen: Box?
    /// The edges' routes, in the order of ``Diagram/edges``.
    private(set) var routes: [Route] = []
    private(set) var legend: [LegendEntry] = []
    private(set) var separator: Separator?
    private(set) var width = 0.0
    private(set) var height = 0.0
    /// Edge crossings between adjacent ranks after crossing reduction.
    private(set) var crossings = 0

    /// Lays out `diagram`.
    public init(_ diagram: Diagram) {
        self.init(diagram, metrics: Metrics())
    }

    init(_ diagram: Diagram, metrics: Metrics) {
        self.metrics = metrics
        var builder = LayoutBuilder(diagram: diagram, metrics: metrics)
        builder.run()
        scenes = builder.sceneBoxes
        anyScreen = builder.anyBox
        routes = builder.routes
        crossings = builder.crossings
        finish(diagram, separatorY: builder.separatorY)
    }

    /// Moves everything so the drawing starts at the margin, then adds the legend below it.
    private mutating func finish(_ diagram: Diagram, separatorY: Double?) {
        var minX = Double.infinity
        var minY = Double.infinity
        var maxX = -Double.infinity
        var maxY = -Double.infinity
        func include(_ point: Point) {
            minX = min(minX, point.x)
            minY = min(minY, point.y)
            maxX = max(maxX, point.x)
            maxY = max(maxY, point.y)
        }
        func include(_ rect: Rect) {
            include(Point(x: rect.x, y: rect.y))
            include(Point(x: rect.maxX, y: rect.maxY))
        }
        for box in scenes { include(box.rect) }
        if let anyScreen { include(anyScreen.rect) }
        for route in routes {
            include(route.path.start)
            for segment in route.path.segments { segment.hull.forEach(include) }
            if let label = route.label { include(label.rect) }
        }
        let captionWidth = TextMetrics.width(Self.separatorCaption, fontSize: metrics.smallFontSize)
        if let separatorY, minX.isFinite {
            include(Point(x: minX + captionWidth, y: separatorY))
        }
        if !minX.isFinite {
            minX = 0
            minY = 0
            maxX = 0
            maxY = 0
        }
        let dx = metrics.margin - minX
        let dy = metrics.margin - minY
        for index in scenes.indices { scenes[index].rect = scenes[index].rect.offset(dx, dy) }
        if var box = anyScreen {
            box.rect = box.rect.offset(dx, dy)
            anyScreen = box
        }
        for index in routes.indices {
            var route = routes[index]
            route.path = route.path.offset(dx, dy)
            if var label = route.label {
                label.rect = label.rect.offset(dx, dy)
                route.label = label
            }
            routes[index] = route
        }
        let drawingWidth = maxX - minX
        if let separatorY {
            separator = Separator(y: separatorY + dy, caption: Point(x: metrics.margin, y: separatorY + dy - 5))
        }
        let drawingBottom = maxY + dy

        // The legend: one entry per style the drawing uses, in rows as wide as the drawing.
        var entries: [(LegendEntry.Sample, String)] = []
        let styles = Set(diagram.edges.map { edge in edge.kind == .link ? "\(edge.kind)\(edge.segue.rawValue)" : edge.kind.rawValue })
        let candidates: [(String, LegendEntry.Sample, String)] = [
            ("link/", .edge(.link, .push), "push /"),
            ("link!", .edge(.link, .modal), "modal !"),
            ("link#", .edge(.link, .tab), "tab switch #"),
            ("tab", .edge(.tab, .tab), "tab of a tabs scene"),
            ("global", .edge(.global, .push), "global link (any screen)"),
            ("redirect", .edge(.redirect, .push), "redirect of a guarded scene")
        ]
        for (style, sample, text) in candidates where styles.contains(style) { entries.append((sample, text)) }
        if !diagram.startPath.isEmpty { entries.append((.startScene, "start path")) }
        let rowWidth = max(drawingWidth, 360)
        let rowHeight = 18.0
        var cursor = Point(x: metrics.margin, y: drawingBottom + 34)
        var rightmost = metrics.margin + drawingWidth
        for (sample, text) in entries {
            let entryWidth = Self.legendSampleWidth + 6 + TextMetrics.width(text, fontSize: metrics.smallFontSize)
            if cursor.x > metrics.margin, cursor.x + entryWidth > metrics.margin + rowWidth {
                cursor = Point(x: metrics.margin, y: cursor.y + rowHeight)
            }
            legend.append(LegendEntry(sample: sample, text: text, origin: cursor))
            rightmost = max(rightmost, cursor.x + entryWidth)
            cursor.x += entryWidth + 20
        }
        width = (rightmost + metrics.margin).rounded(.up)
        height = ((legend.last.map { $0.origin.y + rowHeight / 2 } ?? drawingBottom) + metrics.margin).rounded(.up)
    }
}
