import NavJSON

/// Applies intents to session states on one graph: `(state, intent) → (state, events)` or a refusal.
///
/// Pure: no I/O, no clock, no randomness. Every check runs before anything changes, so a
/// refused intent leaves the state exactly as it was.
public struct Navigator: Sendable {
    public let graph: Graph
    public let limits: Limits
    /// The graph's scenes, each boxed once when the navigator is made (once per graph in the
    /// daemon): a lookup then retains one reference instead of every field of a `Scene`.
    private let entries: SceneTable
    /// The links of a stage whose top has no scene of this graph: the global ones.
    let globalActionLinks: ActionLinks

    public init(graph: Graph, limits: Limits = .defaults) {
        self.graph = graph
        self.limits = limits
        // One list of the global links for the whole graph: every scene's links share it.
        let global = Actions.globalLinks(graph.links)
        var positions: [String: Int] = [:]
        positions.reserveCapacity(global.count)
        for (position, link) in global.enumerated() { positions[link.name] = position }
        self.entries = SceneTable(graph.scenes, globalLinks: global, positions: positions)
        self.globalActionLinks = ActionLinks(own: [], global: global, hidden: [])
    }

    /// A new session at `start` (default: the graph's start path), with its opening transition.
    public func start(at start: String? = nil, context: [String: JSONValue] = [:]) throws(NavError) -> Outcome {
        let empty = SessionState(context: context)
        let outcome = try apply(.navigate(start ?? graph.start), to: empty)
        guard outcome.changed else { throw NavError(.stackUnderflow, "the start path is empty") }
        return outcome
    }

    /// Applies one intent.
    /// - Parameter confirmed: the client has confirmed leaving the screens that ask first (a
    ///   scene's `confirmLeave`); without it, a change that would remove one is refused with
    ///   `confirmation_required`.
    /// - Returns: the new state and its events; for a no-op, the same state and no events.
    /// - Throws: `NavError` with a stable code; the state is then unchanged.
    public func apply(_ intent: Intent, to state: SessionState, confirmed: Bool = false) throws(NavError) -> Outcome {
        switch intent {
        case .batch(let intents):
            return try batch(intents, to: state, confirmed: confirmed)
        case .command(let screen, let name, let args):
            return try command(name, of: screen, args: args, state: state, confirmed: confirmed)
        default:
            return try applyOne(intent, to: state, confirmed: confirmed)
        }
    }

    /// Applies an intent that is not made of others.
    func applyOne(_ intent: Intent, to state: SessionState, confirmed: Bool) throws(NavError) -> Outcome {
        switch intent {
        case .navigate(let text):
            return try navigate(text, from: state, confirmed: confirmed)
        case .link(let name, let params):
            return try navigate(try linkPath(name, params: params, state: state), from: state, confirmed: confirmed)
        case .exit(let result):
            guard let top = state.top else { throw NavError(.stackUnderflow, "the stage is empty") }
            guard state.screens.count > 1 else { throw NavError(.stackUnderflow, "the root screen cannot be exited") }
            guard scene(of: top)?.removable ?? true else {
                throw NavError(.notRemovable, "'\(top.scene)' is not removable")
            }
            return try leave(1, result: result, from: state, confirmed: confirmed)
        case .back(let count, let result):
            guard count >= 1 else { throw NavError(.invalidRequest, "count must be at least 1") }
            guard count < state.screens.count else {
                throw NavError(.stackUnderflow, "cannot go back \(count) from a stage of \(state.screens.count)")
            }
            return try leave(count, result: result, from: state, confirmed: confirmed)
        case .setParams(let screen, let params):
            return try setParams(screen: screen, params: params, state: state)
        case .patchState(let screen, let patch):
            return try patchState(screen: screen, patch: patch, state: state)
        case .patchContext(let patch):
            return try patchContext(patch, state: state, confirmed: confirmed)
        case .command, .batch:
            return try apply(intent, to: state, confirmed: confirmed)
        }
    }

    func scene(_ name: String) -> SceneEntry? {
        entries[name]
    }

    /// How many link values the navigator holds: every scene entry's own, and the global list once.
    var storedLinkCount: Int {
        entries.storedLinkCount + globalActionLinks.global.count
    }

    /// The scene named `name`, first tried where `hint` says (a screen's `sceneHint`).
    @inline(__always)
    func scene(_ name: String, hint: Int32) -> SceneEntry? {
        entries[name, hint: hint]
    }

    /// The scene of a screen on the stage, found through the screen's `sceneHint` when it has one.
    @inline(__always)
    func scene(of screen: Screen) -> SceneEntry? {
        entries[screen.scene, hint: screen.sceneHint]
    }

    /// The same for a screen removed by a transition.
    @inline(__always)
    func scene(of screen: RemovedScreen) -> SceneEntry? {
        entries[screen.scene, hint: screen.sceneHint]
    }

    func navigate(_ text: String, from state: SessionState, confirmed: Bool, redirects: Int? = 0) throws(NavError) -> Outcome {
        guard text.utf8.count <= limits.maxPathLength else {
            throw NavError(.invalidPath, "path longer than \(limits.maxPathLength) bytes", offset: limits.maxPathLength)
        }
        // Parsed into pairs rather than `PathExpression`'s dictionaries: typing reads each text once.
        let expression: ParsedExpression<TextComponent>
        do {
            expression = try PathParser<TextComponent>.with(text) { (parser) throws(PathError) in try parser.parseExpression() }
        } catch {
            throw NavError(error)
        }
        return try navigate(to: expression, from: state, confirmed: confirmed, redirects: redirects)
    }

    /// The path a link leads to, its placeholders filled and percent-encoded.
    private func linkPath(_ name: String, params: [String: JSONValue], state: SessionState) throws(NavError) -> String {
        let topLinks = state.top.flatMap { scene(of: $0)?.links } ?? [:]
        guard let link = topLinks[name] ?? graph.links[name] else {
            throw NavError(.unknownTransition, "no link '\(name)' on '\(state.top?.scene ?? "")' or in the graph")
        }
        for key in params.keys.sorted() where !link.placeholders.contains(key) {
            throw NavError(.invalidParams, "link '\(name)' has no parameter '\(key)'", param: key)
        }
        var values: [String: String] = [:]
        for placeholder in link.placeholders {
            guard let value = params[placeholder] else {
                throw NavError(.invalidParams, "link '\(name)' needs '\(placeholder)'", param: placeholder)
            }
            guard let text = ParamValue.text(of: value) else {
                throw NavError(.invalidParams, "'\(placeholder)' must be a string, number or boolean", param: placeholder)
            }
            values[placeholder] = escapedPathValue(text)
        }
        return link.filled { values[$0] ?? "" }
    }
}

/// One scene of the graph behind a single reference, with the fields navigation reads.
final class SceneEntry: Sendable {
    let scene: Scene
    /// The entry's position in its `SceneTable`, kept by the screens made of it (`Screen.sceneHint`).
    let index: Int32
    /// The parameter schema sorted by key: schemas are small, so a scan is cheaper than hashing.
    let specList: [(key: String, spec: ParamSpec)]

    /// The links a screen of this scene offers on top (``Actions/links``): made once per graph,
    /// so a session view only retains them. The global links are the graph's one shared list.
    let actionLinks: ActionLinks

    /// - Parameters:
    ///   - globalLinks: the graph's global links (``Actions/globalLinks(_:)``), shared by every entry.
    ///   - positions: their positions by name.
    init(_ scene: Scene, index: Int, globalLinks: [Actions.Link] = [], positions: [String: Int] = [:]) {
        self.scene = scene
        self.index = Int32(truncatingIfNeeded: index)
        self.actionLinks = Actions.links(own: scene.links, global: globalLinks, positions: positions)
        self.specList = (scene.params ?? [:]).sorted { $0.key < $1.key }.map { (key: $0.key, spec: $0.value) }
    }

    /// How many link values this entry holds for itself (not shared with other entries).
    var storedLinkCount: Int { actionLinks.own.count + actionLinks.hidden.count }

    /// Whether the schema is small enough to be searched by `specIndex(_:)`.
    var hasSmallSchema: Bool { specList.count <= 8 }

    /// The position of `key` in `specList`, found by a scan (for a small schema).
    @inline(__always)
    func specIndex(_ key: String) -> Int? {
        for index in specList.indices where specList[index].key == key { return index }
        return nil
    }

    var name: String { scene.name }
    var params: [String: ParamSpec]? { scene.params }
    var removable: Bool { scene.removable }
    var tabs: [String]? { scene.tabs }
    var links: [String: Link] { scene.links }
    var inject: [String] { scene.inject }
    var requires: [String] { scene.requires }
    var state: JSONValue { scene.state }
    var redirect: String? { scene.redirect }
    var confirmLeave: LeaveConfirmation? { scene.confirmLeave }
}
