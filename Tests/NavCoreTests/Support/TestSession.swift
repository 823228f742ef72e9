import NavJSON
import Testing

@testable import NavCore

/// A session driven intent by intent, as the daemon drives one: the state is replaced only by applied outcomes.
struct TestSession {
    let navigator: Navigator
    var state: SessionState
    /// Every event so far, the opening transition's included.
    var log: [LifecycleEvent]

    init(_ graph: Graph, context: [String: JSONValue] = [:], limits: Limits = Limits(), start: String? = nil) throws {
        navigator = Navigator(graph: graph, limits: limits)
        let outcome = try navigator.start(at: start, context: context)
        state = outcome.state
        log = outcome.events
    }

    var path: String { state.path.description }

    /// Applies an intent and keeps its state.
    /// - Returns: the events, as `"type scene"` strings (`"transitionStart"` alone).
    @discardableResult
    mutating func apply(_ intent: Intent) throws(NavError) -> [String] {
        let outcome = try navigator.apply(intent, to: state)
        state = outcome.state
        log += outcome.events
        return outcome.events.summary
    }

    @discardableResult
    mutating func navigate(_ path: String) throws(NavError) -> [String] {
        try apply(.navigate(path))
    }

    /// Expects `intent` to be refused with `code` and to change nothing.
    @discardableResult
    func refuse(_ intent: Intent, _ code: NavError.Code, sourceLocation: SourceLocation = #_sourceLocation) -> NavError? {
        do {
            let outcome = try navigator.apply(intent, to: state)
            Issue.record("expected \(code.name), reached \(outcome.state.path)", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            return error
        }
    }

    /// The screen on the stage showing `scene`, nearest the top.
    func screen(_ scene: String) -> Screen? {
        state.screens.last { $0.scene == scene }
    }
}

extension [LifecycleEvent] {
    /// `"type scene"` per event; transitionStart/End carry no scene.
    var summary: [String] {
        map { event in event.scene.map { "\(event.type.rawValue) \($0)" } ?? event.type.rawValue }
    }
}
