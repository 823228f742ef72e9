import NavJSON

extension Navigator {
    /// DeepTransition `changeParams`: the top screen's params replaced (not merged), defaults filled.
    func setParams(screen id: String, params: [String: JSONValue], state: SessionState) throws(NavError) -> Outcome {
        guard let top = state.top else { throw NavError(.stackUnderflow, "the stage is empty") }
        guard top.id == id else {
            if state.allScreens.contains(where: { $0.id == id }) {
                throw NavError(.invalidRequest, "only the top screen (\(top.id)) can change its params")
            }
            throw NavError(.notFound, "no screen '\(id)' in this session")
        }
        guard let scene = scene(of: top) else { throw NavError(.unknownScene, "no scene '\(top.scene)'") }
        var texts: [String: String] = [:]
        for key in params.keys.sorted() {
            // Checked here too (not only by typing), so that of several bad keys the first is named.
            guard key.isValidPathName else { throw Self.invalidKey(key) }
            guard let value = params[key], let text = ParamValue.text(of: value) else {
                throw NavError(.invalidParams, "'\(key)' must be a string, number or boolean", param: key)
            }
            texts[key] = text
        }
        let typed = try typedParams(texts, for: scene)
        guard typed != top.params else { return Outcome(state: state, events: []) }
        var next = state
        next.version += 1
        next.screens[next.screens.count - 1].params = typed
        var events = EventRecorder(seq: state.eventCounter, transition: next.version)
        events.record(.paramsChanged, next.screens[next.screens.count - 1])
        next.eventCounter = events.seq
        return Outcome(state: next, events: events.events)
    }

    /// UseCaseKit `Store.update`: an RFC 7396 merge patch of one screen's state.
    func patchState(screen id: String, patch: JSONValue, state: SessionState) throws(NavError) -> Outcome {
        guard patch.objectValue != nil else {
            throw NavError(.invalidRequest, "a state patch is a JSON object (RFC 7396)")
        }
        var next = state
        var changed: Screen?
        func update(_ screens: inout [Screen]) {
            for position in screens.indices {
                if screens[position].id == id {
                    let patched = screens[position].state.mergePatched(with: patch)
                    if patched != screens[position].state {
                        screens[position].state = patched
                        changed = screens[position]
                    }
                    return
                }
                if var tabs = screens[position].tabs {
                    for name in tabs.saved.keys.sorted() {
                        guard var stack = tabs.saved[name] else { continue }
                        update(&stack)
                        tabs.saved[name] = stack
                    }
                    screens[position].tabs = tabs
                }
            }
        }
        guard state.allScreens.contains(where: { $0.id == id }) else {
            throw NavError(.notFound, "no screen '\(id)' in this session")
        }
        update(&next.screens)
        // A screen's state is not part of the path: the stage's text still holds.
        next.stageText = state.stageText
        guard let screen = changed else { return Outcome(state: state, events: []) }
        // State only grows by patching: bound it, so no client can make a session unboundedly large.
        let size = screen.state.jsonBytes.count
        guard size <= limits.maxStateBytes else {
            throw NavError(.invalidRequest, "the patched state would be \(size) bytes of JSON (limit \(limits.maxStateBytes))")
        }
        next.version += 1
        var events = EventRecorder(seq: state.eventCounter, transition: next.version)
        events.record(.stateChanged, screen)
        next.eventCounter = events.seq
        return Outcome(state: next, events: events.events)
    }
}
