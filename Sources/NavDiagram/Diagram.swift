import NavCore

/// What a drawing of a navigation graph shows, computed from the graph alone (docs/design.md, "Diagrams"):
/// its scenes, the start path, tab membership and every link with the scene it leads to.
///
/// Renderers read this model and nothing else, so that every format (SVG, DOT, Mermaid) draws
/// the same things. Everything is sorted: the same graph gives the same diagram.
///
/// Guards: a scene's `requires` and whether it asks before it is left (`confirmLeave`) are shown
/// on the scene; its `redirect` (docs/design.md, "Redirect and resume") is an edge of its own, from the guarded scene to
/// where a refused navigation goes instead.
public struct Diagram: Sendable, Hashable {
    /// A scene as the diagram shows it.
    public struct Scene: Sendable, Hashable {
        public var name: String
        /// The tab scene names of a `tabs` container, in order; `nil` for a plain screen.
        public var tabs: [String]?
        public var removable: Bool
        /// Context keys the scene requires, as declared.
        public var requires: [String]
        /// Whether leaving a screen of the scene may ask for a confirmation (`confirmLeave`).
        public var confirmsLeave: Bool = false
        /// Whether the graph's start path passes through this scene.
        public var onStartPath: Bool
        /// The scene's links whose path names no scene to go to (`..`, `up(n=2)`), by name.
        public var stubs: [Stub]
    }

    /// What an edge stands for.
    public enum EdgeKind: String, Sendable, Hashable, CaseIterable {
        /// A scene's link: from the scene to the scene its path leads to.
        case link
        /// Tab membership: from a `tabs` container to one of its tab scenes.
        case tab
        /// A global link, available on any screen: from no scene to the scene it leads to.
        case global
        /// A guarded scene's redirect: from the scene to the scene its `redirect` path leads to.
        case redirect
    }

    /// An arrow of the diagram.
    public struct Edge: Sendable, Hashable {
        public var kind: EdgeKind
        /// The scene the edge leaves; `nil` for a global link (any screen).
        public var from: String?
        /// The scene the edge leads to: a tab, or the last named component of a link's path.
        public var to: String
        /// The link's name; `nil` for tab membership and redirects.
        public var link: String?
        /// The link's path template (a redirect's path) as written; `nil` for tab membership.
        public var template: String?
        /// How the target is put on the stage: the segue of the path's last component (`#`
        /// for tab membership).
        public var segue: Segue
    }

    /// A link whose path names no scene: it is shown by name and template, not as an arrow.
    public struct Stub: Sendable, Hashable {
        public var link: String
        public var template: String
    }

    /// The graph's name.
    public internal(set) var name: String
    /// The start path as written in the document.
    public internal(set) var start: String
    /// The scene names of the start path, root first.
    public internal(set) var startPath: [String]
    /// Every scene, sorted by name.
    public internal(set) var scenes: [Scene]
    /// Tab membership (by container, in tab order), then scene links (by scene, then link
    /// name), then global links (by name), then redirects (by scene).
    public internal(set) var edges: [Edge]
    /// Global links whose path names no scene.
    public internal(set) var globalStubs: [Stub]

    /// Whether the diagram has global links, drawn from an "any screen" node.
    public var hasGlobalLinks: Bool {
        !globalStubs.isEmpty || edges.contains { $0.kind == .global }
    }
}

extension Diagram {
    /// The diagram of `graph`.
    public init(graph: Graph) {
        let startPath = Self.startPath(of: graph)
        let onStart = Set(startPath)
        var scenes: [Scene] = []
        var edges: [Edge] = []
        var linkEdges: [Edge] = []
        var redirectEdges: [Edge] = []
        for name in graph.scenes.keys.sorted() {
            guard let scene = graph.scenes[name] else { continue }
            var stubs: [Stub] = []
            for tab in scene.tabs ?? [] where graph.scenes[tab] != nil {
                edges.append(Edge(kind: .tab, from: name, to: tab, link: nil, template: nil, segue: .tab))
            }
            for linkName in scene.links.keys.sorted() {
                guard let link = scene.links[linkName] else { continue }
                if let target = Self.target(of: link, in: graph) {
                    linkEdges.append(
                        Edge(kind: .link, from: name, to: target.scene, link: linkName, template: link.template, segue: target.segue)
                    )
                } else {
                    stubs.append(Stub(link: linkName, template: link.template))
                }
            }
            if let redirect = scene.redirect, let target = Self.target(of: Link(template: redirect), in: graph) {
                redirectEdges.append(
                    Edge(kind: .redirect, from: name, to: target.scene, link: nil, template: redirect, segue: target.segue))
            }
            scenes.append(
                Scene(
                    name: name, tabs: scene.tabs, removable: scene.removable, requires: scene.requires,
                    confirmsLeave: scene.confirmLeave != nil, onStartPath: onStart.contains(name), stubs: stubs
                )
            )
        }
        edges += linkEdges
        var globalStubs: [Stub] = []
        for linkName in graph.links.keys.sorted() {
            guard let link = graph.links[linkName] else { continue }
            if let target = Self.target(of: link, in: graph) {
                edges.append(Edge(kind: .global, from: nil, to: target.scene, link: linkName, template: link.template, segue: target.segue))
            } else {
                globalStubs.append(Stub(link: linkName, template: link.template))
            }
        }
        edges += redirectEdges
        self.init(name: graph.name, start: graph.start, startPath: startPath, scenes: scenes, edges: edges, globalStubs: globalStubs)
    }

    /// The scene a link leads to: the last named component of its path (placeholders filled
    /// with a sample value, as the graph validator reads templates), and that component's segue.
    /// `nil` when the path names no scene (`..`, `up(n=2)`) or the name is not a scene.
    static func target(of link: Link, in graph: Graph) -> (scene: String, segue: Segue)? {
        guard let expression = try? PathExpression.parse(link.filled { _ in "0" }) else { return nil }
        let path: Path
        switch expression {
        case .absolute(let absolute): path = absolute
        case .relative(_, let relative): path = relative
        case .up: return nil
        }
        guard let last = path.components.last, graph.scenes[last.name] != nil else { return nil }
        return (last.name, last.segue)
    }

    /// The scene names of the graph's start path (empty when it does not parse, which a
    /// validated graph's always does).
    static func startPath(of graph: Graph) -> [String] {
        switch try? PathExpression.parse(graph.start) {
        case .absolute(let path)?, .relative(_, let path)?:
            path.components.map(\.name).filter { graph.scenes[$0] != nil }
        case .up?, nil:
            []
        }
    }
}

extension Diagram {
    /// The title of the node global links leave from.
    static let anyScreenTitle = "any screen"

    /// What the "any screen" node says under its title: the global links that name no scene.
    var globalTagLine: String? {
        globalStubs.isEmpty ? nil : globalStubs.map(\.text).joined(separator: " · ")
    }
}

extension Diagram.Scene {
    /// What a scene's box says under its name: `start`, `tabs`, `not removable`,
    /// `requires …` and its links that name no scene; `nil` when none applies.
    var tagLine: String? {
        var parts: [String] = []
        if onStartPath { parts.append("start") }
        if tabs != nil { parts.append("tabs") }
        if !removable { parts.append("not removable") }
        if !requires.isEmpty { parts.append("requires " + requires.joined(separator: ", ")) }
        if confirmsLeave { parts.append("asks before leaving") }
        parts += stubs.map(\.text)
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }
}

extension Diagram.Stub {
    /// `name → template`.
    var text: String { "\(link) → \(template)" }
}
