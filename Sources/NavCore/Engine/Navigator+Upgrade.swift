import NavJSON

/// Graph upgrades (docs/design.md, "Graph upgrades"): a session moves to another version of its graph if its whole
/// stage, saved tab stacks included, still fits that version.
extension Navigator {
    /// Moves `state`, made on version `from` of this graph, to this navigator's graph (version
    /// `to`): each screen's params typed by the scene as it is now (defaults filled in), one
    /// version up, event `graphChanged`.
    /// - Throws: `upgrade_refused` with every reason the stage does not fit, each located by a
    ///   JSON pointer into the stage (`/screens/1/params/id`, `/screens/1/tabs/saved/profile/0/scene`).
    public func upgrade(_ state: SessionState, from: Int, to: Int) throws(NavError) -> Outcome {
        var reasons: [NavError.Reason] = []
        let screens = fitted(state.screens, at: "/screens", reasons: &reasons)
        guard reasons.isEmpty else {
            var error = NavError(
                .upgradeRefused, "the stage does not fit version \(to) of graph '\(graph.name)' (\(reasons.count) reasons)")
            error.reasons = reasons
            throw error
        }
        var next = state
        next.screens = screens
        next.version += 1
        next.eventCounter += 1
        let event = LifecycleEvent(
            seq: next.eventCounter, transition: next.version, type: .graphChanged, detail: .versions(from: from, to: to))
        return Outcome(state: next, events: [event])
    }

    /// The screens as they are on this graph, the reasons they do not fit added to `reasons`.
    private func fitted(_ screens: [Screen], at base: String, reasons: inout [NavError.Reason]) -> [Screen] {
        var result: [Screen] = []
        for (position, screen) in screens.enumerated() {
            let at = base + "/" + String(position)
            guard let entry = scene(screen.scene) else {
                reasons.append(NavError.Reason(pointer: at + "/scene", message: "scene '\(screen.scene)' is not in this version"))
                continue
            }
            var upgraded = screen
            upgraded.sceneHint = entry.index
            upgraded.params = fittedParams(screen.params, of: entry, at: at + "/params", reasons: &reasons)
            // A tab bar keeps its tabs; a screen in a tab is one of its bar's tabs.
            if let names = entry.tabs {
                if var tabs = screen.tabs {
                    if !names.contains(tabs.selected) {
                        reasons.append(
                            NavError.Reason(
                                pointer: at + "/tabs/selected", message: "'\(tabs.selected)' is no longer a tab of '\(screen.scene)'"))
                    }
                    for name in tabs.saved.keys.sorted() {
                        let savedAt = at + "/tabs/saved/" + name
                        if !names.contains(name) {
                            reasons.append(NavError.Reason(pointer: savedAt, message: "'\(name)' is no longer a tab of '\(screen.scene)'"))
                        }
                        tabs.saved[name] = fitted(tabs.saved[name] ?? [], at: savedAt, reasons: &reasons)
                    }
                    upgraded.tabs = tabs
                } else {
                    reasons.append(NavError.Reason(pointer: at + "/scene", message: "'\(screen.scene)' is a tab bar in this version"))
                }
            } else if screen.tabs != nil {
                reasons.append(NavError.Reason(pointer: at + "/tabs", message: "'\(screen.scene)' is no longer a tab bar"))
            }
            if screen.segue == .tab, position > 0, let bar = scene(screens[position - 1].scene)?.tabs, !bar.contains(screen.scene) {
                reasons.append(
                    NavError.Reason(
                        pointer: at + "/scene", message: "'\(screen.scene)' is no longer a tab of '\(screens[position - 1].scene)'"))
            }
            result.append(upgraded)
        }
        return result
    }

    /// The params typed by the scene's schema now: each must still be a parameter of its type,
    /// a required one present; a new default fills in.
    private func fittedParams(_ params: ScreenParams, of entry: SceneEntry, at: String, reasons: inout [NavError.Reason]) -> ScreenParams {
        guard let schema = entry.params else {
            // A scene without a schema takes any parameters, as strings.
            return ScreenParams(params.mapValues { ParamValue.string($0.text) })
        }
        var typed: [String: ParamValue] = [:]
        for (key, value) in params {
            guard let spec = schema[key] else {
                reasons.append(
                    NavError.Reason(pointer: at + "/" + key, message: "'\(entry.name)' has no parameter '\(key)' in this version"))
                continue
            }
            guard let fitted = ParamValue(text: value.text, as: spec.type) else {
                reasons.append(NavError.Reason(pointer: at + "/" + key, message: "'\(value.text)' is not a valid \(spec.type.rawValue)"))
                continue
            }
            typed[key] = fitted
        }
        for (key, spec) in schema.sorted(by: { $0.key < $1.key }) where typed[key] == nil && params[key] == nil {
            if spec.required {
                reasons.append(
                    NavError.Reason(pointer: at + "/" + key, message: "'\(entry.name)' requires the parameter '\(key)' in this version"))
            } else if let value = spec.defaultValue {
                typed[key] = value
            }
        }
        return ScreenParams(typed)
    }
}
