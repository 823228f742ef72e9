/// A DeepTransition path: the screens from the root to the top, `/top/list_news(category=0)!login`.
public struct Path: Sendable, Hashable, Codable {
    public var components: [PathComponent]

    public init(_ components: [PathComponent] = []) {
        self.components = components
    }

    public var isEmpty: Bool { components.isEmpty }

    /// Parses a path without `^`, `..` or `up(…)`: the canonical form of a stage.
    public static func parse(_ text: String) throws(PathError) -> Path {
        Path(try PathParser<PathComponent>.with(text) { (parser) throws(PathError) in try parser.parsePathOnly() })
    }

    /// This path followed by `other`, with the containers a stage gives its screens:
    /// a root pushed with `/` sits in a navigation container, later pushes share it.
    public func appending(_ other: Path) -> Path {
        var result = self
        result.components.append(contentsOf: other.components)
        result.normaliseContainers()
        return result
    }

    /// The first `count` components (all of them when `count` is larger).
    public func prefix(_ count: Int) -> Path {
        Path(Array(components.prefix(max(0, count))))
    }

    mutating func normaliseContainers() {
        for position in components.indices where components[position].segue == .push {
            components[position].container = position == 0 ? .navigation : .none
        }
    }
}

extension Path: CustomStringConvertible {
    /// The canonical text: parameter keys sorted, values escaped where they must be.
    public var description: String {
        canonicalPathText(of: components)
    }
}

/// What turns one path into another: keep `common`, remove `remove` (top last), add `add` in order.
public struct PathDiff: Sendable, Hashable {
    public var common: Path
    public var remove: [PathComponent]
    public var add: [PathComponent]
}

extension Path {
    /// The number of leading components the two paths share.
    public func commonPrefixCount(with other: Path) -> Int {
        StageDiff(sourceCount: components.count, targetCount: other.components.count) {
            components[$0] == other.components[$0]
        }.common
    }

    /// DeepTransition's diff: the longest common prefix, then everything after it on each side
    /// (`StageDiff`, the rule a navigation plans by).
    public static func diff(from source: Path, to target: Path) -> PathDiff {
        let diff = StageDiff(sourceCount: source.components.count, targetCount: target.components.count) {
            source.components[$0] == target.components[$0]
        }
        return PathDiff(
            common: source.prefix(diff.common),
            remove: Array(source.components[diff.removed]),
            add: Array(target.components[diff.added])
        )
    }
}
