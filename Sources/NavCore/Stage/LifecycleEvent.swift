/// What happened to the stage, in the order a client should replay it (DESIGN §3).
public struct LifecycleEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case transitionStart
        case awake
        case willAppear
        case didAppear
        case willDisappear
        case didDisappear
        case remove
        case transitionEnd
        case paramsChanged
        case stateChanged
    }

    /// Per-session sequence number, from 1.
    public var seq: Int
    public var type: Kind
    /// The screen id; `nil` on transitionStart/End.
    public var screen: String?
    public var scene: String?
    /// The session version this event's change produced.
    public var transition: Int
    /// On transitionStart/End: the canonical paths before and after.
    public var from: String?
    public var to: String?

    public init(
        seq: Int, type: Kind, screen: String? = nil, scene: String? = nil, transition: Int, from: String? = nil,
        to: String? = nil
    ) {
        self.seq = seq
        self.type = type
        self.screen = screen
        self.scene = scene
        self.transition = transition
        self.from = from
        self.to = to
    }
}
