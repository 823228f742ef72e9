import NavCore

/// Writes a laid-out diagram as a standalone SVG document: no scripts, no external
/// references, a `<style>` with the defaults.
///
/// What a client may rely on (the reference web client highlights the current screen with it):
/// - each scene is `<g class="scene …" id="scene-NAME" data-scene="NAME">` holding its `<rect>`
///   and `<text>`; extra classes `start` (on the start path), `tabs`, `fixed` (not removable),
///   `guarded` (has `requires`);
/// - each edge is `<g class="edge KIND …" data-from="…" data-to="…">` with KIND `link`, `tab`,
///   `global` or `redirect`, `data-link` naming the link (not on tab edges or redirects),
///   `data-from="*"` on global
///   links, and `segue-push`, `segue-modal` or `segue-tab` on links;
/// - adding the class `current` to a scene's group highlights it.
struct SVGRenderer {
    let diagram: Diagram
    let layout: DiagramLayout
    /// Drawn over the graph when given: scenes carry `data-views` and a count above their box,
    /// followed edges `class="… traffic"`, `data-count` and a pen as wide as their share.
    var traffic: DiagramTraffic? = nil

    /// The stylesheet, scoped to the diagram's root class so that a page the SVG is put into
    /// inline keeps its own styles.
    static let style = """
        .navd-diagram .background { fill: #ffffff; }
        .navd-diagram text { font-family: monospace; }
        .navd-diagram .scene rect, .navd-diagram .sample-box rect { fill: #ffffff; stroke: #4a5568; stroke-width: 1.2px; }
        .navd-diagram .scene.tabs rect { fill: #edf2fa; }
        .navd-diagram .start rect { stroke: #2f855a; stroke-width: 2.5px; }
        .navd-diagram .scene.current rect { fill: #fff3bf; stroke: #d69e2e; stroke-width: 3px; }
        .navd-diagram .any-screen rect { fill: #f4f8fc; stroke: #2b6cb0; stroke-width: 1.2px; stroke-dasharray: 4 3; }
        .navd-diagram .name { font-size: 13px; fill: #1a202c; }
        .navd-diagram .any-screen .name { fill: #2b6cb0; }
        .navd-diagram .tags { font-size: 11px; fill: #718096; }
        .navd-diagram .edge path, .navd-diagram .sample path { fill: none; stroke-width: 1.4px; }
        .navd-diagram .link path { stroke: #4a5568; }
        .navd-diagram .global path { stroke: #2b6cb0; }
        .navd-diagram .redirect path { stroke: #c05621; stroke-dasharray: 3 3; }
        .navd-diagram .tab path { stroke: #8fa0b6; stroke-width: 2px; stroke-dasharray: 1 4; stroke-linecap: round; }
        .navd-diagram .segue-modal path { stroke-dasharray: 7 4; }
        .navd-diagram .segue-tab path { stroke-dasharray: 10 3 2 3; }
        .navd-diagram .edge text { font-size: 11px; fill: #2d3748; paint-order: stroke; stroke: #ffffff; stroke-width: 3px; stroke-linejoin: round; }
        .navd-diagram .edge.global text { fill: #2b6cb0; }
        .navd-diagram .edge.redirect text { fill: #c05621; }
        .navd-diagram .legend text { font-size: 11px; fill: #4a5568; }
        .navd-diagram .views { fill: #b83280; }
        .navd-diagram .traffic path { stroke: #b83280; }
        .navd-diagram .separator path { stroke: #cbd5e0; stroke-width: 1px; stroke-dasharray: 6 4; }
        .navd-diagram .separator text { font-size: 11px; fill: #a0aec0; }
        """

    /// The arrowheads, one per edge kind (a marker's fill cannot follow its path's stroke in SVG 1.1).
    static let arrowColors: [(kind: Diagram.EdgeKind, color: String)] = [
        (.link, "#4a5568"), (.tab, "#8fa0b6"), (.global, "#2b6cb0"), (.redirect, "#c05621")
    ]

    func render() -> [UInt8] {
        var out = ""
        out.reserveCapacity(2048 + 400 * (diagram.scenes.count + diagram.edges.count))
        let width = XMLText.number(layout.width)
        let height = XMLText.number(layout.height)
        out +=
            #"<svg xmlns="http://www.w3.org/2000/svg" class="navd-diagram" viewBox="0 0 \#(width) \#(height)" width="\#(width)" height="\#(height)" font-family="monospace" font-size="13" role="img">"#
        out += "\n<title>\(XMLText.escaped("navigation graph \(diagram.name), start \(diagram.start)"))</title>\n"
        out += "<style>\n\(Self.style)\n</style>\n<defs>\n"
        for (kind, color) in Self.arrowColors {
            out +=
                #"<marker id="navd-arrow-\#(kind.rawValue)" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="\#(color)"/></marker>"#
            out += "\n"
        }
        out += "</defs>\n"
        out += #"<rect class="background" x="0" y="0" width="\#(width)" height="\#(height)"/>"#
        out += "\n<g class=\"edges\">\n"
        for (edge, route) in zip(diagram.edges, layout.routes) { writeEdge(edge, route, into: &out) }
        out += "</g>\n<g class=\"scenes\">\n"
        if let box = layout.anyScreen {
            out += #"<g class="any-screen" id="any-screen">"#
            writeBox(box, tooltip: [Diagram.anyScreenTitle, diagram.globalTagLine], into: &out)
            out += "</g>\n"
        }
        for (scene, box) in zip(diagram.scenes, layout.scenes) {
            var classes = ["scene"]
            if scene.onStartPath { classes.append("start") }
            if scene.tabs != nil { classes.append("tabs") }
            if !scene.removable { classes.append("fixed") }
            if !scene.requires.isEmpty { classes.append("guarded") }
            let views = traffic?.views[scene.name] ?? 0
            if views > 0 { classes.append("viewed") }
            let name = XMLText.escaped(scene.name)
            out += #"<g class="\#(classes.joined(separator: " "))" id="scene-\#(name)" data-scene="\#(name)""#
            if traffic != nil { out += #" data-views="\#(views)""# }
            out += ">"
            writeBox(box, tooltip: [scene.name, scene.tagLine], into: &out)
            if views > 0 {
                out +=
                    #"<text class="views" x="\#(n(box.rect.x + box.rect.width))" y="\#(n(box.rect.y - 3))" text-anchor="end" font-size="11">\#(DiagramTraffic.viewsText(views))</text>"#
            }
            out += "</g>\n"
        }
        out += "</g>\n"
        if let separator = layout.separator {
            out +=
                #"<g class="separator"><path d="M\#(n(layout.metrics.margin)),\#(n(separator.y)) H\#(n(layout.width - layout.metrics.margin))"/>"#
            out +=
                #"<text x="\#(n(separator.caption.x))" y="\#(n(separator.caption.y))" font-size="11">\#(XMLText.escaped(DiagramLayout.separatorCaption))</text></g>"#
            out += "\n"
        }
        writeLegend(into: &out)
        out += "</svg>\n"
        return Array(out.utf8)
    }

    /// A box, with a tooltip of what its text may have cut short (the whole name and tag line).
    private func writeBox(_ box: DiagramLayout.Box, tooltip: [String?], into out: inout String) {
        let rect = box.rect
        out += "<title>\(XMLText.escaped(tooltip.compactMap { $0 }.joined(separator: "\n")))</title>"
        out += #"<rect x="\#(n(rect.x))" y="\#(n(rect.y))" width="\#(n(rect.width))" height="\#(n(rect.height))" rx="6"/>"#
        let nameBaseline = box.tags == nil ? rect.midY + 4.5 : rect.y + 19
        out +=
            #"<text class="name" x="\#(n(rect.midX))" y="\#(n(nameBaseline))" text-anchor="middle" font-size="13">\#(XMLText.escaped(box.title))</text>"#
        if let tags = box.tags {
            out +=
                #"<text class="tags" x="\#(n(rect.midX))" y="\#(n(rect.y + 36))" text-anchor="middle" font-size="11">\#(XMLText.escaped(tags))</text>"#
        }
    }

    private func writeEdge(_ edge: Diagram.Edge, _ route: DiagramLayout.Route, into out: inout String) {
        var classes = ["edge", edge.kind.rawValue]
        if edge.kind != .tab { classes.append(Self.segueClass(edge.segue)) }
        let count = traffic?.count(of: edge)
        if count != nil { classes.append("traffic") }
        out +=
            #"<g class="\#(classes.joined(separator: " "))" data-from="\#(XMLText.escaped(edge.from ?? "*"))" data-to="\#(XMLText.escaped(edge.to))""#
        if let link = edge.link { out += #" data-link="\#(XMLText.escaped(link))""# }
        if let count { out += #" data-count="\#(count)""# }
        out += ">"
        if let count { out += "<title>\(DiagramTraffic.viewsText(count))</title>" }
        let pen = count.flatMap { count in traffic.map { #" style="stroke-width: \#(n($0.penWidth(count)))px""# } } ?? ""
        out += #"<path d="\#(pathData(route.path))"\#(pen) marker-end="url(#navd-arrow-\#(edge.kind.rawValue))"/>"#
        if let label = route.label {
            out +=
                #"<text x="\#(n(label.rect.midX))" y="\#(n(label.rect.midY + 3.8))" text-anchor="middle" font-size="11">\#(XMLText.escaped(label.text))</text>"#
        }
        out += "</g>\n"
    }

    private func writeLegend(into out: inout String) {
        guard !layout.legend.isEmpty else { return }
        out += "<g class=\"legend\">\n"
        for entry in layout.legend {
            let origin = entry.origin
            let sampleWidth = DiagramLayout.legendSampleWidth
            switch entry.sample {
            case .edge(let kind, let segue):
                let classes = ["sample", kind.rawValue] + (kind == .tab ? [] : [Self.segueClass(segue)])
                out +=
                    #"<g class="\#(classes.joined(separator: " "))"><path d="M\#(n(origin.x)),\#(n(origin.y)) H\#(n(origin.x + sampleWidth))" marker-end="url(#navd-arrow-\#(kind.rawValue))"/></g>"#
            case .startScene:
                out +=
                    #"<g class="sample-box start"><rect x="\#(n(origin.x + 4))" y="\#(n(origin.y - 6))" width="\#(n(sampleWidth - 8))" height="12" rx="3"/></g>"#
            }
            out +=
                #"<text x="\#(n(origin.x + sampleWidth + 6))" y="\#(n(origin.y + 3.8))" font-size="11">\#(XMLText.escaped(entry.text))</text>"#
            out += "\n"
        }
        out += "</g>\n"
    }

    private static func segueClass(_ segue: Segue) -> String {
        switch segue {
        case .push: "segue-push"
        case .modal: "segue-modal"
        case .tab: "segue-tab"
        }
    }

    private func pathData(_ path: PathGeometry) -> String {
        var data = "M\(n(path.start.x)),\(n(path.start.y))"
        for segment in path.segments {
            switch segment {
            case .line(let to):
                data += " L\(n(to.x)),\(n(to.y))"
            case .curve(let first, let second, let to):
                data += " C\(n(first.x)),\(n(first.y)) \(n(second.x)),\(n(second.y)) \(n(to.x)),\(n(to.y))"
            }
        }
        return data
    }

    private func n(_ value: Double) -> String {
        XMLText.number(value)
    }
}
