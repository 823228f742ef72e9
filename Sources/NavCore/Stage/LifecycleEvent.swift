import NavJSON

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
    /// The session version this event's change produced.
    ///
    /// Declared before `type`, unlike the public initialiser's parameters, so that the synthesised
    /// memberwise initialiser, `init(seq:transition:type:screen:scene:from:to:)`, is a different
    /// declaration from the public one, stays available to NavCore (see the extension below) and
    /// never matches a call written for the other. Only reflection (`dump`, the default
    /// `description`) shows the order of the fields; the JSON and wire writers name them.
    public var transition: Int
    public var type: Kind
    /// The screen id; `nil` on transitionStart/End.
    public var screen: String?
    public var scene: String?
    /// On transitionStart/End: the canonical paths before and after.
    public var from: String?
    public var to: String?
}

extension LifecycleEvent {
    // Declared here rather than in the type, so that the type keeps its memberwise initialiser: an
    // event built by an initialiser with a body of its own is copied once more when it is appended
    // (its strings retained, then the original released), one built by the memberwise initialiser
    // is not. NavCore records its events with the memberwise one.
    public init(
        seq: Int, type: Kind, screen: String? = nil, scene: String? = nil, transition: Int, from: String? = nil,
        to: String? = nil
    ) {
        self.init(seq: seq, transition: transition, type: type, screen: screen, scene: scene, from: from, to: to)
    }
}
