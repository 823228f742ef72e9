import NavJSON

/// Something a client asks of a session (DESIGN §3).
public enum Intent: Sendable, Hashable {
    /// Go to a path: absolute `^…`, relative, `..`, `up(n=K)`.
    case navigate(String)
    /// Apply a named link of the top scene, or a global one, filling its `{placeholders}`.
    case link(name: String, params: [String: JSONValue])
    /// Remove the top screen (KabuKit `exitScene`).
    case exit
    /// Go back `count` screens.
    case back(Int)
    /// Replace the params of the top screen (`screen` must be its id).
    case setParams(screen: String, params: [String: JSONValue])
    /// RFC 7396 merge patch of a screen's state.
    case patchState(screen: String, patch: JSONValue)
}

/// The result of an applied intent: the next state and what happened, in order.
public struct Outcome: Sendable, Hashable {
    public var state: SessionState
    /// Empty for a no-op (the state is then the one given).
    public var events: [LifecycleEvent]

    public var changed: Bool { !events.isEmpty }
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

    public init(maxDepth: Int = 32, maxPathLength: Int = 4096, maxParams: Int = 32, maxStateBytes: Int = 65536, maxScreens: Int = 256) {
        self.maxDepth = maxDepth
        self.maxPathLength = maxPathLength
        self.maxParams = maxParams
        self.maxStateBytes = maxStateBytes
        self.maxScreens = maxScreens
    }
}
