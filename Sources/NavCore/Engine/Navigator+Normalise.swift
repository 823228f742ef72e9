/// A target component checked against the graph: its scene and typed params.
struct TargetComponent {
    var scene: SceneEntry
    var segue: Segue
    var container: Container
    var params: [String: ParamValue]
    /// The index of the stage's screen this is, unchanged (see `target(reusing:at:)`); `nil` for
    /// a component typed from its text.
    var reused: Int? = nil

    /// The canonical component: the params in their canonical text.
    var component: PathComponent {
        PathComponent(name: scene.name, segue: segue, container: container, params: params.mapValues(\.text))
    }
}

/// Where one component of a resolved target comes from.
enum TargetSource {
    /// The stage's screen at this index, unchanged: it was valid when it was made, so it is re-checked
    /// cheaply instead of being printed and parsed again.
    case stage(Int)
    case component(PathComponent)
}

extension Navigator {
    /// Checks a resolved path against the graph and gives it its canonical form: scenes exist,
    /// params are typed with defaults filled, and every tabs scene is followed by one of its tabs
    /// (its first when the path names none).
    func normalise(_ path: Path) throws(NavError) -> [TargetComponent] {
        try normalise(path.components.map(TargetSource.component), stage: [])
    }

    /// The same for a target part of which is the current stage.
    func normalise(_ sources: [TargetSource], stage: [Screen]) throws(NavError) -> [TargetComponent] {
        var result: [TargetComponent] = []
        result.reserveCapacity(sources.count + 1)
        for (position, source) in sources.enumerated() {
            let (name, segue) = Self.nameAndSegue(of: source, stage: stage)
            if segue == .tab {
                guard let parent = result.last, let tabs = parent.scene.tabs else {
                    throw NavError(.unknownScene, "'#\(name)' must follow a tabs scene")
                }
                guard tabs.contains(name) else {
                    throw NavError(.unknownScene, "'\(name)' is not a tab of '\(parent.scene.name)'")
                }
            }
            switch source {
            case .stage(let index): result.append(try target(reusing: stage, at: index))
            case .component(let component): result.append(try normalise(component))
            }
            let nextSegue = position + 1 < sources.count ? Self.nameAndSegue(of: sources[position + 1], stage: stage).segue : nil
            if let tabs = result.last?.scene.tabs, let firstTab = tabs.first, nextSegue != .tab {
                result.append(try normalise(PathComponent(name: firstTab, segue: .tab)))
            }
        }
        return result
    }

    @inline(__always)
    private static func nameAndSegue(of source: TargetSource, stage: [Screen]) -> (name: String, segue: Segue) {
        switch source {
        case .stage(let index): (stage[index].scene, stage[index].segue)
        case .component(let component): (component.name, component.segue)
        }
    }

    func normalise(_ component: PathComponent) throws(NavError) -> TargetComponent {
        guard let scene = scene(component.name) else {
            throw NavError(.unknownScene, "no scene '\(component.name)' in graph '\(graph.name)'")
        }
        let params = try typedParams(component.params, for: scene)
        return TargetComponent(scene: scene, segue: component.segue, container: component.container, params: params)
    }

    /// `normalise(stage[index].component)`, without the round trip through text when the screen's params
    /// already are what typing their text would give (every key in the schema with its type, every
    /// schema key present); otherwise the full check, with its errors.
    @inline(__always)
    func target(reusing stage: [Screen], at index: Int) throws(NavError) -> TargetComponent {
        let params = stage[index].params
        guard let scene = scene(stage[index].scene), params.count <= limits.maxParams, Self.fits(params, scene)
        else { return try normalise(stage[index].component) }
        return TargetComponent(
            scene: scene, segue: stage[index].segue, container: stage[index].container, params: params,
            reused: scene.name == stage[index].scene ? index : nil
        )
    }

    private static func fits(_ params: [String: ParamValue], _ scene: SceneEntry) -> Bool {
        guard let specs = scene.params else {
            return params.values.allSatisfy { if case .string = $0 { true } else { false } }
        }
        guard specs.count == params.count else { return false }
        let small = scene.hasSmallSchema
        for (key, value) in params {
            let type = small ? scene.specIndex(key).map { scene.specList[$0].spec.type } : specs[key]?.type
            switch (type, value) {
            case (.string?, .string), (.int?, .int), (.bool?, .bool): continue
            case (.number?, .number(let number)) where number.isFinite: continue
            default: return false
            }
        }
        return true
    }

    /// Types parameter texts by the scene's schema and fills defaults.
    func typedParams(_ texts: [String: String], for scene: SceneEntry) throws(NavError) -> [String: ParamValue] {
        guard texts.count <= limits.maxParams else {
            throw NavError(.invalidParams, "more than \(limits.maxParams) parameters")
        }
        guard let specs = scene.params else {
            return texts.mapValues { .string($0) }
        }
        // Fast paths, in any order: when nothing is wrong, order cannot matter.
        if scene.hasSmallSchema {
            if let typed = Self.typedParams(texts, smallSchemaOf: scene) { return typed }
            return try typedParamsInOrder(texts, specs: specs, scene: scene)
        }
        var typed = [String: ParamValue](minimumCapacity: specs.count)
        var valid = true
        for (key, text) in texts {
            guard let spec = specs[key], let value = ParamValue(text: text, as: spec.type) else {
                valid = false
                break
            }
            typed[key] = value
        }
        if valid, typed.count < specs.count {
            for (key, spec) in specs where typed[key] == nil {
                if let defaultValue = spec.defaultValue {
                    typed[key] = defaultValue
                } else if spec.required {
                    valid = false
                    break
                }
            }
        }
        if valid { return typed }
        return try typedParamsInOrder(texts, specs: specs, scene: scene)
    }

    /// The fast path for a small schema: specs found by a scan, the keys given marked in a bit set.
    /// `nil` when something is wrong (the ordered pass then finds what).
    private static func typedParams(_ texts: [String: String], smallSchemaOf scene: SceneEntry) -> [String: ParamValue]? {
        let specs = scene.specList
        var typed = [String: ParamValue](minimumCapacity: specs.count)
        var given: UInt64 = 0
        for (key, text) in texts {
            guard let index = scene.specIndex(key), let value = ParamValue(text: text, as: specs[index].spec.type) else {
                return nil
            }
            typed[key] = value
            given |= 1 << UInt64(index)
        }
        for index in specs.indices where given & (1 << UInt64(index)) == 0 {
            if let defaultValue = specs[index].spec.defaultValue {
                typed[specs[index].key] = defaultValue
            } else if specs[index].spec.required {
                return nil
            }
        }
        return typed
    }

    /// The same, in key order, so that the error reported is always that of the first bad key.
    private func typedParamsInOrder(
        _ texts: [String: String], specs: [String: ParamSpec], scene: SceneEntry
    ) throws(NavError) -> [String: ParamValue] {
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
