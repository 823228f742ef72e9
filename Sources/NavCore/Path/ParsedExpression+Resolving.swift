/// What the path rules read of a component of a stage or a path: a `PathComponent`, a `Screen`.
protocol StageComponent {
    var segue: Segue { get }
    var container: Container { get }
}

extension PathComponent: StageComponent {}
extension Screen: StageComponent {}

/// One component of a resolved path, root first, as a caller of the resolve rule keeps it: its
/// own enum (`TargetSource`, `Path.resolving(_:)`'s), not a generic one, as arrays of a generic
/// enum are destroyed through its generic value witnesses (slower on a navigation's hot path).
protocol ResolvedComponent {
    associatedtype Component: ParsedComponent
    /// The component of the base at this index, unchanged (never copied out of the base).
    static func kept(_ index: Int) -> Self
    /// A component the expression adds, or one of the base's that the result gives another container.
    static func component(_ component: consuming Component) -> Self
}

extension ParsedExpression {
    /// DeepTransition's resolution of this expression against `base`, the current path: the one
    /// rule behind both `Path.resolving(_:)` (and so the conformance vectors) and navigation
    /// (`Navigator.resolve(_:on:)`), over either's components.
    ///
    /// `^…` starts from the empty path; each `..` drops the top component, and past the root stops
    /// at the empty path; then the expression's components are appended. The result has the
    /// containers a stage gives its screens (`Path.appending(_:)`): a root push sits in a
    /// navigation container, later pushes share it (a bare first name of a relative path is a push
    /// like an explicit `/`). `up(n=K)` drops K components and keeps the rest as they are,
    /// containers included.
    ///
    /// - Parameters:
    ///   - base: the current path's components, root first.
    ///   - rebuild: the base's component at an index as a `Component` with the given container,
    ///     for a kept component whose container the result changes (rare: only a base whose
    ///     pushes are not in their stage containers).
    /// - Returns: the resolved path, root first.
    // Inlined into its two callers: called, it costs a navigation ~60 instructions more (the
    // rebuild closure's context is retained and released).
    @inline(__always)
    func resolved<Base: StageComponent, Resolved: ResolvedComponent>(
        on base: [Base], rebuild: (Int, Container) -> Component
    ) -> [Resolved] where Resolved.Component == Component {
        let kept: Int
        let added: [Component]
        switch self {
        case .absolute(let components):
            (kept, added) = (0, components)
        case .up(let count):
            let keep = min(max(0, base.count - count), base.count)
            return (0..<keep).map(Resolved.kept)
        case .relative(let ups, let components):
            (kept, added) = (base.count - ups, components)
        }
        let keep = min(max(0, kept), base.count)
        var resolved: [Resolved] = []
        resolved.reserveCapacity(keep + added.count + 1)
        // Base components are read by index, never copied whole (a screen is large).
        for index in 0..<keep {
            let segue = base[index].segue
            let container = segue == .push ? (index == 0 ? Container.navigation : .none) : base[index].container
            if container == base[index].container {
                resolved.append(.kept(index))
            } else {
                resolved.append(.component(rebuild(index, container)))
            }
        }
        for offset in added.indices {
            var component = added[offset]
            if component.segue == .push { component.container = keep + offset == 0 ? .navigation : .none }
            // Moved into the result, not copied (a copy retains its name and params once more).
            resolved.append(.component(consume component))
        }
        return resolved
    }
}
