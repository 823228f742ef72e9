/// The formats a diagram is written in. Each renders the same ``Diagram``; a new format is a
/// case here and a renderer beside ``SVGRenderer``.
public enum DiagramFormat: String, Sendable, Hashable, CaseIterable {
    /// SVG, laid out by navd itself (``DiagramLayout``).
    case svg
    /// Graphviz DOT, for `dot` to lay out.
    case dot
    /// A Mermaid `flowchart`.
    case mermaid

    /// The media type of the rendered bytes.
    ///
    /// DOT has a registered type (`text/vnd.graphviz`). Mermaid's registered type is
    /// `application/vnd.mermaid` (IANA, 2023), which declares no `charset` and which a browser
    /// downloads instead of showing; the text is served as `text/plain` with its charset, so
    /// that it can be read and pasted where it is wanted.
    public var mediaType: String {
        switch self {
        case .svg: "image/svg+xml"
        case .dot: "text/vnd.graphviz; charset=utf-8"
        case .mermaid: "text/plain; charset=utf-8"
        }
    }
}

extension Diagram {
    /// The diagram written in `format`.
    public func rendered(as format: DiagramFormat) -> [UInt8] {
        switch format {
        case .svg: SVGRenderer(diagram: self, layout: DiagramLayout(self)).render()
        case .dot: DOTRenderer(diagram: self).render()
        case .mermaid: MermaidRenderer(diagram: self).render()
        }
    }
}
