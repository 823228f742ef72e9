/// What a client writes to say where to go: absolute (`^/top`), relative (`show(id=9)`,
/// `../profile`, `..!login`) or `up(n=K)`.
public enum PathExpression: Sendable, Hashable {
    /// `^…`: from the window's root.
    case absolute(Path)
    /// `ups` leading `..` steps, then `path` appended to what is left.
    case relative(ups: Int, path: Path)
    /// `up(n=K)`: K screens up.
    case up(Int)

    /// Parses a path as a client writes it; `invalid_path` with an offset where it breaks the grammar.
    public static func parse(_ text: String) throws(PathError) -> PathExpression {
        switch try PathParser<PathComponent>.with(text, { (parser) throws(PathError) in try parser.parseExpression() }) {
        case .absolute(let components): .absolute(Path(components))
        case .relative(let ups, let components): .relative(ups: ups, path: Path(components))
        case .up(let count): .up(count)
        }
    }
}

extension PathExpression: CustomStringConvertible {
    /// The canonical text of the expression.
    public var description: String {
        switch self {
        case .absolute(let path):
            return "^" + path.description
        case .up(let count):
            return "up(n=\(count))"
        case .relative(let ups, let path):
            guard ups > 0 else { return path.description }
            var text = Array(repeating: "..", count: ups).joined(separator: "/")
            for component in path.components { text += component.description }
            return text
        }
    }
}

extension PathExpression {
    /// The expression over `PathComponent`s, as the resolve rule takes it.
    var parsed: ParsedExpression<PathComponent> {
        switch self {
        case .absolute(let path): .absolute(path.components)
        case .relative(let ups, let path): .relative(ups: ups, components: path.components)
        case .up(let count): .up(count)
        }
    }
}

extension Path {
    /// Resolves an expression against this path as DeepTransition does: `..` past the root
    /// stops at the empty path, and the result's containers are those of a stage
    /// (`ParsedExpression.resolved(on:rebuild:)`, the rule a navigation resolves by).
    public func resolving(_ expression: PathExpression) -> Path {
        let components = self.components
        let resolved: [PathSource] = expression.parsed.resolved(on: components) { index, container in
            var component = components[index]
            component.container = container
            return component
        }
        return Path(
            resolved.map { source in
                switch source {
                case .kept(let index): components[index]
                case .component(let component): component
                }
            }
        )
    }
}

/// One component of a path resolved by `Path.resolving(_:)`.
private enum PathSource: ResolvedComponent {
    case kept(Int)
    case component(PathComponent)
}
