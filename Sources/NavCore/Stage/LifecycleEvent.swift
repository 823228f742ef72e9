import NavJSON

/// What happened to the stage, in the order a client should replay it (docs/design.md, "Lifecycle event order").
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
        /// The session's context changed (``Detail/keys``); `screen` and `scene` are nil.
        case contextChanged
        /// A value handed to the screen revealed by an exit or back (``Detail/value``; `from` is
        /// the scene that was on top before), immediately before `transitionEnd`.
        case result
        /// The session moved to another version of its graph (``Detail/versions``).
        case graphChanged
    }

    /// What some kinds of event carry besides screen, scene and paths: boxed, so that an event
    /// without one stays as small as before.
    public indirect enum Detail: Sendable, Hashable {
        /// contextChanged: the top-level context keys whose values changed, sorted.
        case keys([String])
        /// stateChanged by a command: its name.
        case command(String)
        /// result: the value handed over.
        case value(JSONValue)
        /// graphChanged: the graph versions before and after.
        case versions(from: Int, to: Int)
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
    public var detail: Detail? = nil
}

extension LifecycleEvent {
    // Declared here rather than in the type, so that the type keeps its memberwise initialiser: an
    // event built by an initialiser with a body of its own is copied once more when it is appended
    // (its strings retained, then the original released), one built by the memberwise initialiser
    // is not. NavCore records its events with the memberwise one.
    public init(
        seq: Int, type: Kind, screen: String? = nil, scene: String? = nil, transition: Int, from: String? = nil,
        to: String? = nil, detail: Detail? = nil
    ) {
        self.init(seq: seq, transition: transition, type: type, screen: screen, scene: scene, from: from, to: to, detail: detail)
    }
}
