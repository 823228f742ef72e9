import NavJSON

/// Something a client asks of a session (docs/design.md, "Intents").
public enum Intent: Sendable, Hashable {
    /// Go to a path: absolute `^…`, relative, `..`, `up(n=K)`.
    case navigate(String)
    /// Apply a named link of the top scene, or a global one, filling its `{placeholders}`.
    case link(name: String, params: [String: JSONValue])
    /// Remove the top screen (KabuKit `exitScene`), handing `result` to the screen revealed
    /// (KabuKit's Scenario returning a value to its caller).
    case exit(result: JSONValue? = nil)
    /// Go back `count` screens, handing `result` to the screen revealed.
    case back(Int, result: JSONValue? = nil)
    /// Replace the params of the top screen (`screen` must be its id).
    case setParams(screen: String, params: [String: JSONValue])
    /// RFC 7396 merge patch of a screen's state.
    case patchState(screen: String, patch: JSONValue)
    /// RFC 7396 merge patch of the session's context; resumes the session's `pending`
    /// navigation once its requirements hold (docs/design.md, "Redirect and resume").
    case patchContext(JSONValue)
    /// A named command of a screen's scene, with its arguments.
    case command(screen: String, name: String, args: [String: JSONValue] = [:])
    /// Intents applied in order as one change, all or nothing (not themselves batches).
    case batch([Intent])
}

/// The result of an applied intent: the next state and what happened, in order.
public struct Outcome: Sendable, Hashable {
    public var state: SessionState
    /// Empty for a no-op (the state is then the one given).
    public var events: [LifecycleEvent]

    public var changed: Bool { !events.isEmpty }

    public init(state: SessionState, events: [LifecycleEvent]) {
        self.state = state
        self.events = events
    }
}

/// Bounds on what one session may hold, so no client can make a session unboundedly large.
public struct Limits: Sendable, Hashable {
    public var maxDepth = 32
    public var maxPathLength = 4096
    public var maxParams = 32
    /// The largest a screen's state may grow by merge patches, in bytes of JSON.
    public var maxStateBytes = 65536
    /// The most screens a session may hold, on the stage and in every saved tab stack (nested
    /// tabs screens too): `maxDepth` bounds only the stage, and tab switches that each save a
    /// stack could otherwise grow one session without end.
    public var maxScreens = 256
    /// The largest a session's context may grow by merge patches, in bytes of JSON.
    public var maxContextBytes = 4096
    /// The largest result an exit or back may hand over, in bytes of JSON.
    public var maxResultBytes = 16384
    /// The most intents one batch may hold.
    public var maxBatchItems = 32
    /// How many redirects one navigation may follow before it is refused.
    public var maxRedirects = 5
    /// The most scenes a graph may have: a loaded graph's memory and its validation grow with
    /// its scenes and links (docs/design.md, "Graphs").
    public var maxGraphScenes = 10_000
    /// The most links a graph may have, its global links and every scene's own counted together.
    public var maxGraphLinks = 50_000
    /// The largest a graph document may be, in bytes of JSON.
    public var maxGraphBytes = 8 << 20
    /// The longest a graph's name may be, in bytes.
    public var maxGraphNameBytes: Int = Graph.maxNameLength

    /// Every bound at its default. A caller outside NavCore sets the bounds it changes on a copy;
    /// NavCore and its tests also have the synthesised memberwise initialiser (internal), whose
    /// parameters default to the same values: each default is written once, on its field.
    public static let defaults = Limits()
}
