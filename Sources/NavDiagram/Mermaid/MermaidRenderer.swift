import NavCore

/// Writes a diagram as a Mermaid `flowchart`.
///
/// Scene names become safe node ids (``MermaidText/nodeID(_:)``); every label is quoted and
/// escaped (``MermaidText/escaped(_:)``). Scenes show their name and what the SVG says under
/// it; classes `start`, `tabs`, `fixed` and `guarded` mark them as in the SVG. Tab membership
/// is a dotted line without a head, a scene link an arrow labelled with its name and path
/// template (`-.->` for a modal, `==>` to a tab), a global link an arrow from the "any
/// screen" node, a redirect a dotted orange arrow labelled `redirect` and its path. Edges are
/// written in the diagram's order, so `linkStyle` can name them by
/// index.
struct MermaidRenderer {
    let diagram: Diagram

    /// The class definitions, one per mark, in the SVG's colours.
    static let classDefinitions: [(name: String, style: String)] = [
        ("start", "stroke:#2f855a,stroke-width:3px"),
        ("tabs", "fill:#edf2fa"),
        ("fixed", "stroke-width:2px,stroke-dasharray:6 2"),
        ("guarded", "color:#7b341e"),
        ("anyScreen", "fill:#f4f8fc,stroke:#2b6cb0,color:#2b6cb0,stroke-dasharray:4 3")
    ]

    func render() -> [UInt8] {
        var out = "flowchart TB\n"
        out += "  %% navd diagram of graph \(MermaidText.comment(diagram.name)), start \(MermaidText.comment(diagram.start))\n"
        var classMembers: [String: [String]] = [:]
        for scene in diagram.scenes {
            let id = MermaidText.nodeID(scene.name)
            let lines = [scene.name] + (scene.tagLine.map { [$0] } ?? [])
            out += "  \(id)[\(MermaidText.label(lines))]\n"
            if scene.onStartPath { classMembers["start", default: []].append(id) }
            if scene.tabs != nil { classMembers["tabs", default: []].append(id) }
            if !scene.removable { classMembers["fixed", default: []].append(id) }
            if !scene.requires.isEmpty { classMembers["guarded", default: []].append(id) }
        }
        if diagram.hasGlobalLinks {
            let lines = [Diagram.anyScreenTitle] + (diagram.globalTagLine.map { [$0] } ?? [])
            out += "  \(MermaidText.anyScreenID)([\(MermaidText.label(lines))])\n"
            classMembers["anyScreen", default: []].append(MermaidText.anyScreenID)
        }
        var tabEdges: [Int] = []
        var globalEdges: [Int] = []
        var redirectEdges: [Int] = []
        for (index, edge) in diagram.edges.enumerated() {
            let from = edge.from.map(MermaidText.nodeID) ?? MermaidText.anyScreenID
            let to = MermaidText.nodeID(edge.to)
            switch edge.kind {
            case .tab:
                tabEdges.append(index)
                out += "  \(from) -.- \(to)\n"
            case .link, .global:
                if edge.kind == .global { globalEdges.append(index) }
                let label = MermaidText.label([edge.link ?? "", edge.template ?? ""])
                out += "  \(from) \(Self.arrow(edge.segue))|\(label)| \(to)\n"
            case .redirect:
                redirectEdges.append(index)
                out += "  \(from) -.->|\(MermaidText.label(["redirect", edge.template ?? ""]))| \(to)\n"
            }
        }
        for (name, style) in Self.classDefinitions {
            guard let members = classMembers[name] else { continue }
            out += "  classDef \(name) \(style)\n"
            out += "  class \(members.joined(separator: ",")) \(name)\n"
        }
        if !tabEdges.isEmpty {
            out += "  linkStyle \(tabEdges.map(String.init).joined(separator: ",")) stroke:#8fa0b6,stroke-width:2px\n"
        }
        if !globalEdges.isEmpty {
            out += "  linkStyle \(globalEdges.map(String.init).joined(separator: ",")) stroke:#2b6cb0,color:#2b6cb0\n"
        }
        if !redirectEdges.isEmpty {
            out += "  linkStyle \(redirectEdges.map(String.init).joined(separator: ",")) stroke:#c05621,color:#c05621\n"
        }
        return Array(out.utf8)
    }

    private static func arrow(_ segue: Segue) -> String {
        switch segue {
        case .push: "-->"
        case .modal: "-.->"
        case .tab: "==>"
        }
    }
}
