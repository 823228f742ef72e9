/// The formats a diagram is written in. Each renders the same ``Diagram``; a new format is a
/// case here and a renderer beside ``SVGRenderer``.
public enum DiagramFormat: String, Sendable, Hashable, CaseIterable {
    /// SVG, laid out by navd itself (``DiagramLayout``).
    case svg

    /// The media type of the rendered bytes.
    public var mediaType: String {
        switch self {
        case .svg: "image/svg+xml"
        }
    }
}

extension Diagram {
    /// The diagram written in `format`.
    public func rendered(as format: DiagramFormat) -> [UInt8] {
        switch format {
        case .svg: SVGRenderer(diagram: self, layout: DiagramLayout(self)).render()
        }
    }
}
