/// A target component checked against the graph: its scene, typed params and canonical text.
struct TargetComponent {
    var scene: Scene
    var component: PathComponent
    var params: [String: ParamValue]
}

extension Navigator {
    /// Checks a resolved path against the graph and gives it its canonical form: scenes exist,
    /// params are typed with defaults filled, and every tabs scene is followed by one of its tabs
    /// (its first when the path names none).
    func normalise(_ path: Path) throws(NavError) -> [TargetComponent] {
        var result: [TargetComponent] = []
        result.reserveCapacity(path.components.count + 1)
        var components = path.components[...]
        while let component = components.popFirst() {
            if component.segue == .tab {
                guard let parent = result.last, let tabs = parent.scene.tabs else {
                    throw NavError(.unknownScene, "'#\(component.name)' must follow a tabs scene")
                }
                guard tabs.contains(component.name) else {
                    throw NavError(.unknownScene, "'\(component.name)' is not a tab of '\(parent.scene.name)'")
                }
            }
            result.append(try normalise(component))
            if let tabs = result.last?.scene.tabs, let firstTab = tabs.first, components.first?.segue != .tab {
                result.append(try normalise(PathComponent(name: firstTab, segue: .tab)))
            }
        }
        return result
    }

    func normalise(_ component: PathComponent) throws(NavError) -> TargetComponent {
        guard let scene = scene(component.name) else {
            throw NavError(.unknownScene, "no scene '\(component.name)' in graph '\(graph.name)'")
        }
        let params = try typedParams(component.params, for: scene)
        var canonical = component
        canonical.params = params.mapValues(\.text)
        return TargetComponent(scene: scene, component: canonical, params: params)
    }

    /// Types parameter texts by the scene's schema and fills defaults.
    func typedParams(_ texts: [String: String], for scene: Scene) throws(NavError) -> [String: ParamValue] {
        guard texts.count <= limits.maxParams else {
            throw NavError(.invalidParams, "more than \(limits.maxParams) parameters")
        }
        guard let specs = scene.params else {
            return texts.mapValues { .string($0) }
        }
        var typed: [String: ParamValue] = [:]
        for key in texts.keys.sorted() {
            guard let spec = specs[key] else {
                throw NavError(.invalidParams, "'\(scene.name)' has no parameter '\(key)'", param: key)
            }
            guard let text = texts[key], let value = ParamValue(text: text, as: spec.type) else {
                throw NavError(.invalidParams, "'\(key)' of '\(scene.name)' must be \(spec.type.rawValue)", param: key)
            }
            typed[key] = value
        }
        for key in specs.keys.sorted() where typed[key] == nil {
            if let defaultValue = specs[key]?.defaultValue {
                typed[key] = defaultValue
            } else if specs[key]?.required == true {
                throw NavError(.invalidParams, "'\(scene.name)' needs parameter '\(key)'", param: key)
            }
        }
        return typed
    }
}
