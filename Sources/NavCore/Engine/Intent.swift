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
    public var maxDepth: Int
    public var maxPathLength: Int
    public var maxParams: Int
    /// The largest a screen's state may grow by merge patches, in bytes of JSON.
    public var maxStateBytes: Int
    /// The most screens a session may hold, on the stage and in every saved tab stack (nested
    /// tabs screens too): `maxDepth` bounds only the stage, and tab switches that each save a
    /// stack could otherwise grow one session without end.
    public var maxScreens: Int
    /// The largest a session's context may grow by merge patches, in bytes of JSON.
    public var maxContextBytes: Int
    /// The largest result an exit or back may hand over, in bytes of JSON.
    public var maxResultBytes: Int
    /// The most intents one batch may hold.
    public var maxBatchItems: Int
    /// How many redirects one navigation may follow before it is refused.
    public var maxRedirects: Int
    /// The most scenes a graph may have: a loaded graph's memory and its validation grow with
    /// its scenes and links (docs/design.md, "Graphs").
    public var maxGraphScenes: Int
    /// The most links a graph may have, its global links and every scene's own counted together.
    public var maxGraphLinks: Int
    /// The largest a graph document may be, in bytes of JSON.
    public var maxGraphBytes: Int
    /// The longest a graph's name may be, in bytes.
    public var maxGraphNameBytes: Int = Graph.maxNameLength

    public init(
        maxDepth: Int = 32, maxPathLength: Int = 4096, maxParams: Int = 32, maxStateBytes: Int = 65536, maxScreens: Int = 256,
        maxContextBytes: Int = 4096, maxResultBytes: Int = 16384, maxBatchItems: Int = 32, maxRedirects: Int = 5,
        maxGraphScenes: Int = 10_000, maxGraphLinks: Int = 50_000, maxGraphBytes: Int = 8 << 20
    ) {
        self.maxDepth = maxDepth
        self.maxPathLength = maxPathLength
        self.maxParams = maxParams
        self.maxStateBytes = maxStateBytes
        self.maxScreens = maxScreens
        self.maxContextBytes = maxContextBytes
        self.maxResultBytes = maxResultBytes
        self.maxBatchItems = maxBatchItems
        self.maxRedirects = maxRedirects
        self.maxGraphScenes = maxGraphScenes
        self.maxGraphLinks = maxGraphLinks
        self.maxGraphBytes = maxGraphBytes
    }
}
