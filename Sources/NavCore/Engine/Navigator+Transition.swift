import NavJSON

/// What one transition does to the stage, computed in full before anything changes.
struct TransitionPlan {
    /// The stage after the transition.
    var screens: [Screen]
    /// How many screens were created: the last ones of `screens`.
    var createdCount: Int
    /// Screens removed, top to root (with the saved tab stacks of a removed tabs screen).
    var removed: [RemovedScreen]
    /// When the stage after is the first `kept` screens of the stage before and then the created ones.
    var kept: Int?

    /// Screens created, root to top.
    var created: ArraySlice<Screen> { screens.suffix(createdCount) }
}

/// What the checks and the events need of a removed screen (not the whole screen, to copy less).
struct RemovedScreen {
    var id: String
    var scene: String
    /// The screen's `sceneHint`.
    var sceneHint: Int32
}

extension Navigator {
    /// Navigates the DeepTransition way: keep the common prefix of the current and the target
    /// stage, remove the rest, add the new components in order; tab switches save and restore.
    ///
    /// A navigation refused only because a created scene's `requires` are unmet goes to that
    /// scene's `redirect` instead (at most `limits.maxRedirects` in a row), and the stage it
    /// would have reached becomes the session's `pending`. Any other applied navigation clears
    /// `pending`.
    func navigate(
        to expression: ParsedExpression<TextComponent>, from state: SessionState, confirmed: Bool, redirects: Int? = 0
    ) throws(NavError) -> Outcome {
        var resolved = resolve(expression, on: state.screens)
        if isUpMove(expression), let last = resolved.last, scene(Self.name(of: last, on: state.screens))?.tabs != nil {
            // A tab bar leaves with its last tab: going up from a tab root never strands the bar.
            resolved.removeLast()
        }
        guard !resolved.isEmpty else {
            throw NavError(.stackUnderflow, "'\(expression.pathExpression)' would leave the stage empty")
        }
        let target = try normalise(resolved, stage: state.screens)
        guard target.count <= limits.maxDepth else {
            throw NavError(.stackTooDeep, "the stage would be \(target.count) screens deep (limit \(limits.maxDepth))")
        }
        var counter = state.screenCounter
        guard let plan = try plan(from: state, to: target, counter: &counter) else {
            return Outcome(state: state, events: [])
        }
        // Saved tab stacks count too; a session already over the limit may still shrink.
        let screens = Self.screenCount(plan.screens)
        if screens > limits.maxScreens, screens > Self.screenCount(state.screens) {
            throw NavError(
                .stackTooDeep, "the session would hold \(screens) screens, saved tab stacks included (limit \(limits.maxScreens))"
            )
        }
        for index in plan.removed.indices {
            let name = plan.removed[index].scene
            guard scene(of: plan.removed[index])?.removable ?? true else {
                throw NavError(.notRemovable, "'\(name)' (\(plan.removed[index].id)) is not removable")
            }
        }
        let created = plan.created
        for index in created.indices {
            let name = created[index].scene
            let entry = scene(name, hint: created[index].sceneHint)
            for key in entry?.requires ?? [] where (state.context[key] ?? .null) == .null {
                // `redirects` is nil where redirects are not followed (a resume of `pending`).
                guard let redirect = entry?.redirect, let redirects else {
                    throw NavError(.transitionRefused, "'\(name)' requires '\(key)' in the session context")
                }
                guard redirects < limits.maxRedirects else {
                    throw NavError(.transitionRefused, "more than \(limits.maxRedirects) redirects in a row, the last from '\(name)'")
                }
                var outcome = try navigate(redirect, from: state, confirmed: confirmed, redirects: redirects + 1)
                // The first target refused waits: a chain of redirects keeps the user's own.
                if outcome.changed { outcome.state.pending = canonicalPathText(of: plan.screens) }
                return outcome
            }
        }
        if !confirmed, let screen = firstAskingToLeave(plan.removed, in: state) {
            throw NavError(
                .confirmationRequired, "'\(screen.scene)' (\(screen.id)) asks for a confirmation before it is left", screen: screen.id)
        }

        var next = state
        next.version += 1
        next.screens = plan.screens
        next.screenCounter = counter
        next.pending = nil
        let from: String
        let to: String
        if let kept = plan.kept {
            (from, to) = canonicalPathTexts(of: state.screens, text: state.stageText, keeping: kept, adding: created)
        } else {
            (from, to) = (state.pathText, next.pathText)
        }
        // The next navigation's `from`.
        next.stageText = to
        var events = EventRecorder(seq: state.eventCounter, transition: next.version)
        events.record(.transitionStart, from: from, to: to)
        for index in created.indices { events.record(.awake, id: created[index].id, scene: created[index].scene) }
        let oldTop = state.screens.indices.last
        let newTop = next.screens.indices.last
        if let oldTop, let newTop, state.screens[oldTop].id != next.screens[newTop].id {
            let (oldID, oldScene) = (state.screens[oldTop].id, state.screens[oldTop].scene)
            let (newID, newScene) = (next.screens[newTop].id, next.screens[newTop].scene)
            events.record(.willDisappear, id: oldID, scene: oldScene)
            events.record(.willAppear, id: newID, scene: newScene)
            events.record(.didDisappear, id: oldID, scene: oldScene)
            events.record(.didAppear, id: newID, scene: newScene)
        } else if oldTop == nil, let newTop {
            let (newID, newScene) = (next.screens[newTop].id, next.screens[newTop].scene)
            events.record(.willAppear, id: newID, scene: newScene)
            events.record(.didAppear, id: newID, scene: newScene)
        }
        for index in plan.removed.indices {
            events.record(.remove, id: plan.removed[index].id, scene: plan.removed[index].scene)
        }
        events.record(.transitionEnd, from: from, to: to)
        next.eventCounter = events.seq
        return Outcome(state: next, events: events.events)
    }

    /// The first of the removed screens whose scene asks before it is left (`confirmLeave`), now.
    private func firstAskingToLeave(_ removed: [RemovedScreen], in state: SessionState) -> RemovedScreen? {
        for index in removed.indices {
            guard let confirmation = scene(of: removed[index])?.confirmLeave else { continue }
            if case .always = confirmation { return removed[index] }
            // A pointer into the screen's state: read where the screen is (rare: only such scenes get here).
            let id = removed[index].id
            if let screen = state.allScreens.first(where: { $0.id == id }), confirmation.applies(to: screen.state) {
                return removed[index]
            }
        }
        return nil
    }

    /// Exit and back: up `count` screens, and `result` (if any) handed to the screen revealed in
    /// a `result` event immediately before `transitionEnd`.
    func leave(_ count: Int, result: JSONValue?, from state: SessionState, confirmed: Bool) throws(NavError) -> Outcome {
        if let result {
            let size = result.jsonBytes.count
            guard size <= limits.maxResultBytes else {
                throw NavError(.invalidRequest, "the result is \(size) bytes of JSON (limit \(limits.maxResultBytes))", param: "result")
            }
        }
        var outcome = try navigate(to: .up(count), from: state, confirmed: confirmed)
        guard let result, outcome.changed, let leaving = state.top, let revealed = outcome.state.top,
            let end = outcome.events.popLast()
        else { return outcome }
        outcome.events.append(
            LifecycleEvent(
                seq: end.seq, transition: end.transition, type: .result, screen: revealed.id, scene: revealed.scene,
                from: leaving.scene, detail: .value(result)
            )
        )
        outcome.events.append(
            LifecycleEvent(seq: end.seq + 1, transition: end.transition, type: .transitionEnd, from: end.from, to: end.to))
        outcome.state.eventCounter = end.seq + 1
        return outcome
    }

    /// `state.path.resolving(expression)`, as sources: the screens it keeps from the stage unchanged
    /// are named by index rather than printed into a path. The rule is `Path.resolving(_:)`'s own
    /// (`ParsedExpression.resolved(on:rebuild:)`), over the stage's screens.
    func resolve(_ expression: ParsedExpression<TextComponent>, on screens: [Screen]) -> [TargetSource] {
        expression.resolved(on: screens) { index, container in
            var component = TextComponent(screens[index])
            component.container = container
            return component
        }
    }

    private static func name(of source: TargetSource, on screens: [Screen]) -> String {
        switch source {
        case .kept(let index): screens[index].scene
        case .component(let component): component.name
        }
    }

    private func isUpMove(_ expression: ParsedExpression<TextComponent>) -> Bool {
        switch expression {
        case .up: true
        case .relative(let ups, let components): ups > 0 && components.isEmpty
        case .absolute: false
        }
    }

    /// The plan from the current stage to `target`; `nil` when they are the same (a no-op).
    private func plan(from state: SessionState, to target: [TargetComponent], counter: inout Int) throws(NavError) -> TransitionPlan? {
        let current = state.screens
        // `Path.diff(from:to:)`'s rule: a screen kept unchanged by the resolve (`reused`) is the same
        // at its own position without comparing it.
        let diff = StageDiff(sourceCount: current.count, targetCount: target.count) { position in
            target[position].reused == position || current[position].shows(target[position])
        }
        if diff.isEmpty { return nil }
        let common = diff.common

        // A different tab of a tabs screen that stays: save the tab we leave, restore the one we enter.
        if common > 0, common < current.count, common < target.count, target[common].segue == .tab,
            var tabs = current[common - 1].tabs, current[common].scene != target[common].scene.name
        {
            let leaving = current[common...]
            let firstModal = leaving.firstIndex { $0.segue == .modal } ?? current.endIndex
            let enteringName = target[common].scene.name
            let saved = tabs.saved[enteringName] ?? []
            var kept: [Screen]
            // The modals above the tab are removed like any removal: saved stacks of a modal tab bar too.
            var removed = Self.withSavedStacks(current[firstModal...])
            var created: ArraySlice<TargetComponent> = []
            if target.count == common + 1, !saved.isEmpty {
                kept = saved
            } else {
                // The saved stack against the rest of the target, by the same rule.
                let shared = StageDiff(sourceCount: saved.count, targetCount: target.count - common) { position in
                    saved[position].shows(target[common + position])
                }.common
                kept = Array(saved[..<shared])
                removed += Self.withSavedStacks(saved[shared...])
                created = target[(common + shared)...]
            }
            tabs.saved[current[common].scene] = Array(current[common..<firstModal])
            tabs.saved[enteringName] = nil
            tabs.selected = enteringName
            var bar = current[common - 1]
            bar.tabs = tabs
            var screens = Array(current[..<(common - 1)])
            screens.append(bar)
            screens += kept
            makeScreens(created, context: state.context, counter: &counter, into: &screens)
            return TransitionPlan(screens: screens, createdCount: created.count, removed: removed)
        }

        let removed = Self.withSavedStacks(current[diff.removed])
        let created = target[diff.added]
        var screens: [Screen] = []
        screens.reserveCapacity(common + created.count)
        screens.append(contentsOf: current[..<common])
        makeScreens(created, context: state.context, counter: &counter, into: &screens)
        return TransitionPlan(screens: screens, createdCount: created.count, removed: removed, kept: common)
    }

    /// The screens of `screens` in top-to-root order, each removed tabs screen preceded by the screens
    /// of its saved stacks.
    private static func withSavedStacks(_ screens: ArraySlice<Screen>) -> [RemovedScreen] {
        var result: [RemovedScreen] = []
        result.reserveCapacity(screens.count)
        for index in screens.indices.reversed() {
            if let tabs = screens[index].tabs {
                for name in tabs.saved.keys.sorted() {
                    result += withSavedStacks((tabs.saved[name] ?? [])[...])
                }
            }
            result.append(
                RemovedScreen(id: screens[index].id, scene: screens[index].scene, sceneHint: screens[index].sceneHint)
            )
        }
        return result
    }

    /// New screens for target components, appended to `screens`: ids from the counter, deps injected,
    /// initial state set.
    private func makeScreens(
        _ components: ArraySlice<TargetComponent>, context: [String: JSONValue], counter: inout Int,
        into screens: inout [Screen]
    ) {
        for index in components.indices {
            counter += 1
            let scene = components[index].scene
            var deps: [String: JSONValue] = [:]
            for key in scene.inject {
                if let value = context[key] { deps[key] = value }
            }
            var tabs: TabsState?
            if let names = scene.tabs {
                let selected = index + 1 < components.endIndex ? components[index + 1].scene.name : (names.first ?? "")
                tabs = TabsState(selected: selected)
            }
            screens.append(
                // The memberwise initialiser: one with a body of its own would copy the screen.
                Screen(
                    id: screenID(counter), scene: scene.name, segue: components[index].segue,
                    container: components[index].container, sceneHint: scene.index, params: components[index].params,
                    deps: deps, state: scene.state, tabs: tabs
                )
            )
        }
    }
}

/// `"e\(counter)"`, without the cost of string interpolation.
func screenID(_ counter: Int) -> String {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
        var writer = PathTextWriter(buffer)
        writer.byte(UInt8(ascii: "e"))
        writer.decimal(counter)
        return writer.text
    }
}

extension Screen {
    /// Whether this screen is the target component: `component == target.component` without building
    /// the component (typed params that are equal print equal; only unequal ones are compared as text).
    @inline(__always)
    func shows(_ target: TargetComponent) -> Bool {
        guard scene == target.scene.name, segue == target.segue, container == target.container,
            params.count == target.params.count
        else { return false }
        return params == target.params || component.params == target.component.params
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

    @inline(__always)
    mutating func record(_ type: LifecycleEvent.Kind, _ screen: Screen) {
        record(type, id: screen.id, scene: screen.scene)
    }

    @inline(__always)
    mutating func record(_ type: LifecycleEvent.Kind, id: String, scene: String) {
        seq += 1
        // The memberwise initialiser (`transition` before `type`): the public one would copy the event.
        events.append(LifecycleEvent(seq: seq, transition: transition, type: type, screen: id, scene: scene))
    }

    @inline(__always)
    mutating func record(_ type: LifecycleEvent.Kind, from: String, to: String) {
        seq += 1
        events.append(LifecycleEvent(seq: seq, transition: transition, type: type, from: from, to: to))
    }
}

extension Navigator {
    /// The screens of a stage and of every tab stack saved in it, nested ones included.
    static func screenCount(_ screens: [Screen]) -> Int {
        var count = screens.count
        for index in screens.indices {
            guard let saved = screens[index].tabs?.saved, !saved.isEmpty else { continue }
            for stack in saved.values { count += screenCount(stack) }
        }
        return count
    }
}
