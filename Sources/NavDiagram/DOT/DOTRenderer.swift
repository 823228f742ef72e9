import NavCore

/// Writes a diagram as a Graphviz `digraph`, for `dot` to lay out.
///
/// Every ID and text is a double-quoted string (``DOTText``): scene names, link names, path
/// templates and `requires` keys are never read as DOT syntax. Scenes are boxes labelled with
/// their name and what the SVG says under it (``Diagram/Scene/tagLine``); the start path's
/// scenes have a green border, `tabs` containers are filled, scenes that are not removable
/// have a double border. Edges are labelled with the link's name and path template; modal
/// links are dashed, links to a tab bold, tab membership dotted, global links blue from an
/// "any screen" node, redirects orange and dashed with an open head. Nodes and edges carry `class` attributes like the SVG's (`scene start`,
/// `edge link segue-modal`, …), which Graphviz's own SVG output keeps.
struct DOTRenderer {
    let diagram: Diagram
    /// Drawn over the graph when given: each scene's views in its label, each followed edge's
    /// count in its label with a pen as wide as its share, and the moves no link draws (back to
    /// an earlier scene, a deep link) as edges of their own, `class="edge traffic"`.
    var traffic: DiagramTraffic? = nil

    /// The node global links leave from: its ID has a space, which no scene name can have.
    static let anyScreenID = "any screen"

    func render() -> [UInt8] {
        var out = "digraph \(DOTText.quoted(diagram.name)) {\n"
        out +=
            "  graph [label=\(DOTText.quoted("\(diagram.name) · start \(diagram.start)")), labelloc=\"t\", fontname=\"monospace\", fontsize=\"14\"];\n"
        out += "  node [shape=\"box\", style=\"rounded\", fontname=\"monospace\", fontsize=\"12\", color=\"#4a5568\"];\n"
        out += "  edge [fontname=\"monospace\", fontsize=\"10\", color=\"#4a5568\"];\n"
        out += "\n  // scenes\n"
        for scene in diagram.scenes { writeScene(scene, into: &out) }
        if diagram.hasGlobalLinks {
            let lines = [Diagram.anyScreenTitle] + (diagram.globalTagLine.map { [$0] } ?? [])
            out +=
                "  \(DOTText.quoted(Self.anyScreenID)) [label=\(DOTText.label(lines)), class=\"any-screen\", style=\"rounded,dashed,filled\", fillcolor=\"#f4f8fc\", color=\"#2b6cb0\", fontcolor=\"#2b6cb0\"];\n"
        }
        var section: Diagram.EdgeKind?
        for edge in diagram.edges {
            if edge.kind != section {
                section = edge.kind
                out += "\n  // \(Self.sectionTitle(edge.kind))\n"
            }
            writeEdge(edge, into: &out)
        }
        if let traffic {
            let undrawn = traffic.undrawn(in: diagram)
            if !undrawn.isEmpty { out += "\n  // traffic where no link is drawn\n" }
            for (move, count) in undrawn {
                out +=
                    "  \(DOTText.quoted(move.from)) -> \(DOTText.quoted(move.to)) [label=\(DOTText.quoted(String(count))), class=\"edge traffic\", style=\"dashed\", color=\"#b83280\", fontcolor=\"#b83280\", penwidth=\"\(Self.number(traffic.penWidth(count)))\", constraint=\"false\"];\n"
            }
        }
        out += "}\n"
        return Array(out.utf8)
    }

    private func writeScene(_ scene: Diagram.Scene, into out: inout String) {
        var classes = ["scene"]
        var attributes: [String] = []
        var styles = ["rounded"]
        if scene.onStartPath {
            classes.append("start")
            attributes += ["color=\"#2f855a\"", "penwidth=\"2.5\""]
        }
        if scene.tabs != nil {
            classes.append("tabs")
            styles.append("filled")
            attributes.append("fillcolor=\"#edf2fa\"")
        }
        if !scene.removable {
            classes.append("fixed")
            attributes.append("peripheries=\"2\"")
        }
        if !scene.requires.isEmpty { classes.append("guarded") }
        let views = traffic?.views[scene.name] ?? 0
        if views > 0 { classes.append("viewed") }
        let lines = [scene.name] + (scene.tagLine.map { [$0] } ?? []) + (views > 0 ? [DiagramTraffic.viewsText(views)] : [])
        out += "  \(DOTText.quoted(scene.name)) [label=\(DOTText.label(lines)), class=\(DOTText.quoted(classes.joined(separator: " ")))"
        if styles.count > 1 { out += ", style=\(DOTText.quoted(styles.joined(separator: ",")))" }
        for attribute in attributes { out += ", " + attribute }
        out += "];\n"
    }

    private func writeEdge(_ edge: Diagram.Edge, into out: inout String) {
        let from = edge.from ?? Self.anyScreenID
        out += "  \(DOTText.quoted(from)) -> \(DOTText.quoted(edge.to)) ["
        var attributes: [String] = []
        switch edge.kind {
        case .tab:
            attributes += ["class=\"edge tab\"", "style=\"dotted\"", "color=\"#8fa0b6\"", "penwidth=\"2\""]
        case .link, .global:
            let classes = ["edge", edge.kind.rawValue, Self.segueClass(edge.segue)]
            attributes.append("label=\(DOTText.label([edge.link ?? "", edge.template ?? ""]))")
            attributes.append("class=\(DOTText.quoted(classes.joined(separator: " ")))")
            switch edge.segue {
            case .push: break
            case .modal: attributes.append("style=\"dashed\"")
            case .tab: attributes.append("style=\"bold\"")
            }
            if edge.kind == .global { attributes += ["color=\"#2b6cb0\"", "fontcolor=\"#2b6cb0\""] }
            if let count = traffic?.count(of: edge), let traffic {
                attributes[0] = "label=\(DOTText.label([edge.link ?? "", edge.template ?? "", DiagramTraffic.viewsText(count)]))"
                attributes[1] = "class=\(DOTText.quoted((classes + ["traffic"]).joined(separator: " ")))"
                attributes += ["penwidth=\"\(Self.number(traffic.penWidth(count)))\"", "color=\"#b83280\""]
            }
        case .redirect:
            attributes.append("label=\(DOTText.label(["redirect", edge.template ?? ""]))")
            attributes.append("class=\(DOTText.quoted(["edge", "redirect", Self.segueClass(edge.segue)].joined(separator: " ")))")
            attributes += ["style=\"dashed\"", "color=\"#c05621\"", "fontcolor=\"#c05621\"", "arrowhead=\"empty\""]
        }
        out += attributes.joined(separator: ", ") + "];\n"
    }

    private static func sectionTitle(_ kind: Diagram.EdgeKind) -> String {
        switch kind {
        case .tab: "tab membership"
        case .link: "scene links"
        case .global: "global links"
        case .redirect: "redirects of guarded scenes"
        }
    }

    /// A pen width with at most two decimals.
    static func number(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return fraction == 0 ? String(hundredths / 100) : String(hundredths / 100) + "." + (fraction < 10 ? "0" : "") + String(fraction)
    }

    static func segueClass(_ segue: Segue) -> String {
        switch segue {
        case .push: "segue-push"
        case .modal: "segue-modal"
        case .tab: "segue-tab"
        }
    }
}
