/// What one transition does to the stage, computed in full before anything changes.
struct TransitionPlan {
    /// The stage after the transition.
    var screens: [Screen]
    /// Screens created, root to top.
    var created: [Screen]
    /// Screens removed, top to root (with the saved tab stacks of a removed tabs screen).
    var removed: [Screen]
}

extension Navigator {
    /// Navigates the DeepTransition way: keep the common prefix of the current and the target
    /// stage, remove the rest, add the new components in order; tab switches save and restore.
    func navigate(to expression: PathExpression, from state: SessionState) throws(NavError) -> Outcome {
        let current = state.path
        var resolved = current.resolving(expression)
        if isUpMove(expression), let last = resolved.components.last, scene(last.name)?.tabs != nil {
            // A tab bar leaves with its last tab: going up from a tab root never strands the bar.
            resolved.components.removeLast()
        }
        guard !resolved.isEmpty else {
            throw NavError(.stackUnderflow, "'\(expression)' would leave the stage empty")
        }
        let target = try normalise(resolved)
        guard target.count <= limits.maxDepth else {
            throw NavError(.stackTooDeep, "the stage would be \(target.count) screens deep (limit \(limits.maxDepth))")
        }
        var counter = state.screenCounter
        guard let plan = try plan(from: state, to: target, counter: &counter) else {
            return Outcome(state: state, events: [])
        }
        for screen in plan.removed {
            guard scene(screen.scene)?.removable ?? true else {
                throw NavError(.notRemovable, "'\(screen.scene)' (\(screen.id)) is not removable")
            }
        }
        for screen in plan.created {
            for key in scene(screen.scene)?.requires ?? [] where (state.context[key] ?? .null) == .null {
                throw NavError(.transitionRefused, "'\(screen.scene)' requires '\(key)' in the session context")
            }
        }

        var next = state
        next.version += 1
        next.screens = plan.screens
        next.screenCounter = counter
        let from = current.description
        let to = next.path.description
        var events = EventRecorder(seq: state.eventCounter, transition: next.version)
        events.record(.transitionStart, from: from, to: to)
        for screen in plan.created { events.record(.awake, screen) }
        if let oldTop = state.top, let newTop = next.top, oldTop.id != newTop.id {
            events.record(.willDisappear, oldTop)
            events.record(.willAppear, newTop)
            events.record(.didDisappear, oldTop)
            events.record(.didAppear, newTop)
        } else if state.top == nil, let newTop = next.top {
            events.record(.willAppear, newTop)
            events.record(.didAppear, newTop)
        }
        for screen in plan.removed { events.record(.remove, screen) }
        events.record(.transitionEnd, from: from, to: to)
        next.eventCounter = events.seq
        return Outcome(state: next, events: events.events)
    }

    private func isUpMove(_ expression: PathExpression) -> Bool {
        switch expression {
        case .up: true
        case .relative(let ups, let path): ups > 0 && path.isEmpty
        case .absolute: false
        }
    }

    /// The plan from the current stage to `target`; `nil` when they are the same (a no-op).
    private func plan(from state: SessionState, to target: [TargetComponent], counter: inout Int) throws(NavError) -> TransitionPlan? {
        let current = state.screens
        var common = 0
        while common < current.count, common < target.count, current[common].component == target[common].component {
            common += 1
        }
        if common == current.count, common == target.count { return nil }

        // A different tab of a tabs screen that stays: save the tab we leave, restore the one we enter.
        if common > 0, common < current.count, common < target.count, target[common].component.segue == .tab,
            var tabs = current[common - 1].tabs, current[common].scene != target[common].scene.name
        {
            let leaving = current[common...]
            let firstModal = leaving.firstIndex { $0.segue == .modal } ?? current.endIndex
            let enteringName = target[common].scene.name
            let saved = tabs.saved[enteringName] ?? []
            var kept: [Screen]
            var removed: [Screen] = current[firstModal...].reversed()
            var created: [Screen] = []
            if target.count == common + 1, !saved.isEmpty {
                kept = saved
            } else {
                var shared = 0
                while shared < saved.count, common + shared < target.count,
                    saved[shared].component == target[common + shared].component
                {
                    shared += 1
                }
                kept = Array(saved[..<shared])
                removed += Self.withSavedStacks(saved[shared...].reversed())
                created = makeScreens(target[(common + shared)...], context: state.context, counter: &counter)
            }
            tabs.saved[current[common].scene] = Array(current[common..<firstModal])
            tabs.saved[enteringName] = nil
            tabs.selected = enteringName
            var bar = current[common - 1]
            bar.tabs = tabs
            var screens = Array(current[..<(common - 1)])
            screens.append(bar)
            screens += kept
            screens += created
            return TransitionPlan(screens: screens, created: created, removed: removed)
        }

        let removed = Self.withSavedStacks(current[common...].reversed())
        let created = makeScreens(target[common...], context: state.context, counter: &counter)
        return TransitionPlan(screens: Array(current[..<common]) + created, created: created, removed: removed)
    }

    /// The screens in top-to-root order, each removed tabs screen preceded by the screens of its saved stacks.
    private static func withSavedStacks(_ screens: some Sequence<Screen>) -> [Screen] {
        var result: [Screen] = []
        for screen in screens {
            if let tabs = screen.tabs {
                for name in tabs.saved.keys.sorted() {
                    result += withSavedStacks((tabs.saved[name] ?? []).reversed())
                }
            }
            result.append(screen)
        }
        return result
    }

    /// New screens for target components: ids from the counter, deps injected, initial state set.
    private func makeScreens(
        _ components: ArraySlice<TargetComponent>, context: [String: JSONValue], counter: inout Int
    ) -> [Screen] {
        var screens: [Screen] = []
        screens.reserveCapacity(components.count)
        for (offset, target) in zip(components.indices, components) {
            counter += 1
            var deps: [String: JSONValue] = [:]
            for key in target.scene.inject {
                if let value = context[key] { deps[key] = value }
            }
            var screen = Screen(
                id: "e\(counter)", scene: target.scene.name, segue: target.component.segue,
                container: target.component.container, params: target.params, deps: deps, state: target.scene.state
            )
            if target.scene.tabs != nil {
                let selected = offset + 1 < components.endIndex ? components[offset + 1].scene.name : (target.scene.tabs?.first ?? "")
                screen.tabs = TabsState(selected: selected)
            }
            screens.append(screen)
        }
        return screens
    }
}

/// Numbers events as they are recorded.
struct EventRecorder {
    private(set) var seq: Int
    let transition: Int
    private(set) var events: [LifecycleEvent] = []

    init(seq: Int, transition: Int) {
        self.seq = seq
        self.transition = transition
        events.reserveCapacity(12)
    }

    mutating func record(_ type: LifecycleEvent.Kind, _ screen: Screen) {
        seq += 1
        events.append(LifecycleEvent(seq: seq, type: type, screen: screen.id, scene: screen.scene, transition: transition))
    }

    mutating func record(_ type: LifecycleEvent.Kind, from: String, to: String) {
        seq += 1
        events.append(LifecycleEvent(seq: seq, type: type, transition: transition, from: from, to: to))
    }
}
