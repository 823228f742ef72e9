import NavJSON

/// A target component checked against the graph: its scene and typed params.
struct TargetComponent {
    var scene: SceneEntry
    var segue: Segue
    var container: Container
    var params: ScreenParams
    /// The index of the stage's screen this is, unchanged (see `target(reusing:at:)`); `nil` for
    /// a component typed from its text.
    var reused: Int? = nil

    /// The canonical component: the params in their canonical text.
    var component: PathComponent {
        PathComponent(name: scene.name, segue: segue, container: container, params: params.mapValues(\.text))
    }
}

/// Where one component of a resolved target comes from.
enum TargetSource: ResolvedComponent {
    /// The stage's screen at this index, unchanged: it was valid when it was made, so it is re-checked
    /// cheaply instead of being printed and parsed again.
    case kept(Int)
    case component(TextComponent)
}

extension Navigator {
    /// Checks a resolved path against the graph and gives it its canonical form: scenes exist,
    /// params are typed with defaults filled, and every tabs scene is followed by one of its tabs
    /// (its first when the path names none).
    func normalise(_ path: Path) throws(NavError) -> [TargetComponent] {
        try normalise(path.components.map { .component(TextComponent($0)) }, stage: [])
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
            case .kept(let index): result.append(try target(reusing: stage, at: index))
            case .component(let component): result.append(try normalise(component))
            }
            let nextSegue = position + 1 < sources.count ? Self.nameAndSegue(of: sources[position + 1], stage: stage).segue : nil
            if let tabs = result.last?.scene.tabs, let firstTab = tabs.first, nextSegue != .tab {
                result.append(try normalise(TextComponent(name: firstTab, segue: .tab)))
            }
        }
        return result
    }

    @inline(__always)
    private static func nameAndSegue(of source: TargetSource, stage: [Screen]) -> (name: String, segue: Segue) {
        switch source {
        case .kept(let index): (stage[index].scene, stage[index].segue)
        case .component(let component): (component.name, component.segue)
        }
    }

    func normalise(_ component: TextComponent) throws(NavError) -> TargetComponent {
        guard let scene = scene(component.name) else {
            throw NavError(.unknownScene, "no scene '\(component.name)' in graph '\(graph.name)'")
        }
        let params = try typedParams(component.params.pairs, for: scene)
        return TargetComponent(scene: scene, segue: component.segue, container: component.container, params: params)
    }

    /// `normalise(TextComponent(stage[index]))`, without the round trip through text when the screen's params
    /// already are what typing their text would give (every key in the schema with its type, every
    /// schema key present); otherwise the full check, with its errors.
    @inline(__always)
    func target(reusing stage: [Screen], at index: Int) throws(NavError) -> TargetComponent {
        let params = stage[index].params
        // The two fields read in place (passing `stage[index]` would copy the whole screen).
        guard let scene = scene(stage[index].scene, hint: stage[index].sceneHint), params.count <= limits.maxParams,
            Self.fits(params, scene)
        else { return try normalise(TextComponent(stage[index])) }
        return TargetComponent(
            scene: scene, segue: stage[index].segue, container: stage[index].container, params: params,
            reused: scene.name == stage[index].scene ? index : nil
        )
    }

    private static func fits(_ params: ScreenParams, _ scene: SceneEntry) -> Bool {
        guard scene.params != nil else {
            return params.allSatisfy { if case .string = $0.value { true } else { false } }
        }
        // Both are sorted by key with unique keys: the same key set means the same key at each position.
        let specs = scene.specList
        guard specs.count == params.count else { return false }
        for index in params.indices {
            let (key, value) = params[index]
            guard key == specs[index].key else { return false }
            switch (specs[index].spec.type, value) {
            case (.string, .string), (.int, .int), (.bool, .bool): continue
            case (.number, .number(let number)) where number.isFinite: continue
            default: return false
            }
        }
        return true
    }

    /// Types parameter texts (keys unique, in any order) by the scene's schema and fills defaults.
    func typedParams<Texts: Collection>(
        _ texts: Texts, for scene: SceneEntry
    ) throws(NavError) -> ScreenParams where Texts.Element == (key: String, value: String) {
        guard texts.count <= limits.maxParams else {
            throw NavError(.invalidParams, "more than \(limits.maxParams) parameters")
        }
        guard let specs = scene.params else {
            var typed: [ScreenParams.Element] = []
            typed.reserveCapacity(texts.count)
            for (key, text) in texts {
                // A scene without a schema takes any key, but only one the path grammar can print
                // and read back: a key from a parsed path always is one, a key sent as JSON (the
                // params route) may not be. (A schema's keys were checked when the graph was read.)
                guard key.isValidPathName else { throw Self.invalidKey(key) }
                typed.append((key: key, value: .string(text)))
            }
            return ScreenParams(unsorted: typed)
        }
        // Fast paths, in any order: when nothing is wrong, order cannot matter.
        if scene.hasSmallSchema {
            if let typed = Self.typedParams(texts, smallSchemaOf: scene) { return typed }
            return try typedParamsInOrder(texts, specs: specs, scene: scene)
        }
        var typed: [ScreenParams.Element] = []
        typed.reserveCapacity(specs.count)
        var valid = true
        for (key, text) in texts {
            guard let spec = specs[key], let value = ParamValue(text: text, as: spec.type) else {
                valid = false
                break
            }
            typed.append((key: key, value: value))
        }
        if valid, typed.count < specs.count {
            let given = Set(texts.map(\.key))
            for (key, spec) in scene.specList where !given.contains(key) {
                if let defaultValue = spec.defaultValue {
                    typed.append((key: key, value: defaultValue))
                } else if spec.required {
                    valid = false
                    break
                }
            }
        }
        if valid { return ScreenParams(unsorted: typed) }
        return try typedParamsInOrder(texts, specs: specs, scene: scene)
    }

    /// The fast path for a small schema: the schema is walked in key order (so the result comes out
    /// sorted), each key's text found by a scan. `nil` when something is wrong (the ordered pass then
    /// finds what).
    private static func typedParams<Texts: Collection>(
        _ texts: Texts, smallSchemaOf scene: SceneEntry
    ) -> ScreenParams? where Texts.Element == (key: String, value: String) {
        let specs = scene.specList
        // A key outside the schema: some given key would be left unmatched.
        guard texts.count <= specs.count else { return nil }
        // Sized exactly (stored sessions keep these arrays): the keys given, plus the defaults filled.
        var count = texts.count
        for index in specs.indices where specs[index].spec.defaultValue != nil {
            if !texts.contains(where: { $0.key == specs[index].key }) { count += 1 }
        }
        var typed: [ScreenParams.Element] = []
        typed.reserveCapacity(count)
        var matched = 0
        for index in specs.indices {
            let spec = specs[index].spec
            if let text = texts.first(where: { $0.key == specs[index].key })?.value {
                guard let value = ParamValue(text: text, as: spec.type) else { return nil }
                typed.append((key: specs[index].key, value: value))
                matched += 1
            } else if let defaultValue = spec.defaultValue {
                typed.append((key: specs[index].key, value: defaultValue))
            } else if spec.required {
                return nil
            }
        }
        guard matched == texts.count else { return nil }
        return ScreenParams(sorted: typed)
    }

    /// A key that is not a path name (`[A-Za-z0-9_.-]+`, not `.` or `..`), named in the refusal.
    static func invalidKey(_ key: String) -> NavError {
        NavError(.invalidParams, "parameter name '\(key)' may use only A-Z a-z 0-9 _ . - (and is not . or ..)", param: key)
    }

    /// The same, in key order, so that the error reported is always that of the first bad key.
    private func typedParamsInOrder<Texts: Collection>(
        _ texts: Texts, specs: [String: ParamSpec], scene: SceneEntry
    ) throws(NavError) -> ScreenParams where Texts.Element == (key: String, value: String) {
        var typed: [String: ParamValue] = [:]
        for (key, text) in texts.sorted(by: { $0.key < $1.key }) {
            guard let spec = specs[key] else {
                throw NavError(.invalidParams, "'\(scene.name)' has no parameter '\(key)'", param: key)
            }
            guard let value = ParamValue(text: text, as: spec.type) else {
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
        return ScreenParams(typed)
    }
}
