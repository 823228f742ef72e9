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

extension Path {
    /// Resolves an expression against this path as DeepTransition does: `..` past the root
    /// stops at the empty path, and the result's containers are those of a stage.
    public func resolving(_ expression: PathExpression) -> Path {
        switch expression {
        case .absolute(let path):
            return Path().appending(path)
        case .up(let count):
            return prefix(components.count - count)
        case .relative(let ups, let path):
            var relative = path
            if var first = relative.components.first, first.segue == .push {
                // A bare first name is a push, like an explicit `/`.
                first.container = .none
                relative.components[0] = first
            }
            return prefix(components.count - ups).appending(relative)
        }
    }
}
