import NavJSON

extension Graph {
    /// The reserved name that no scene may take (`up(n=K)` is a path of its own).
    public static let reservedSceneNames: Set<String> = ["up"]

    /// The longest a graph's name may be, in bytes: it is a URL segment and a key in every store.
    public static let maxNameLength = 64

    /// Reads and validates a graph document.
    ///
    /// - Parameter limits: the daemon's: a document with more scenes or links than they allow is
    ///   refused before anything proportional to its size is built, and a start path deeper than
    ///   `maxDepth` is an invalid start (every session would be refused there).
    /// - Returns: the graph and any warnings (a warning never stops a graph from loading). Any scene
    ///   can be reached by a deep path, so a scene no link or tab leads to is not one (docs/design.md, "Graph documents").
    /// - Throws: `GraphError` listing *every* error found, each with its JSON pointer.
    public static func decode(_ document: JSONValue, limits: Limits = .defaults) throws(GraphError) -> (
        graph: Graph, warnings: [GraphIssue]
    ) {
        var decoder = GraphDecoder(limits: limits)
        let graph = decoder.decode(document)
        if let graph {
            decoder.issues += GraphValidator(graph: graph, limits: limits).issues()
        }
        let errors = decoder.issues.filter { $0.severity == .error }
        let warnings = decoder.issues.filter { $0.severity == .warning }
        guard let graph, errors.isEmpty else { throw GraphError(issues: errors + warnings) }
        return (graph, warnings)
    }

    /// Reads a JSON graph document from its bytes.
    public static func decode(json bytes: some Collection<UInt8>, limits: Limits = .defaults) throws(GraphError) -> (
        graph: Graph, warnings: [GraphIssue]
    ) {
        let size = bytes.count
        guard size <= limits.maxGraphBytes else {
            throw GraphError(issues: [GraphIssue(.tooLarge, at: "", "the document is \(size) bytes (limit \(limits.maxGraphBytes))")])
        }
        let document: JSONValue
        do {
            document = try JSONValue(parsing: bytes)
        } catch {
            throw GraphError(issues: [GraphIssue(.invalidJSON, at: "", error.description)])
        }
        return try decode(document, limits: limits)
    }
}

/// Turns a document into a `Graph`, collecting structural problems instead of stopping at the first.
struct GraphDecoder {
    var issues: [GraphIssue] = []
    var limits = Limits()

    private static let graphFields: Set<String> = ["name", "start", "scenes", "links", "version", "description"]
    private static let sceneFields: Set<String> = [
        "params", "removable", "container", "tabs", "links", "inject", "requires", "state", "description", "redirect",
        "confirmLeave", "commands"
    ]
    private static let commandFields: Set<String> = ["when", "patch", "navigate", "description"]
    private static let paramFields: Set<String> = ["type", "required", "default", "description"]

    mutating func decode(_ document: JSONValue) -> Graph? {
        guard let root = document.objectValue else {
            issues.append(GraphIssue(.invalidType, at: "", "a graph is a JSON object, not \(document.typeName)"))
            return nil
        }
        checkFields(root, allowed: Self.graphFields, at: "")
        checkDescription(root, at: "")
        if let version = root["version"], version.intValue == nil {
            issues.append(GraphIssue(.invalidType, at: "/version", "version is an integer, not \(version.typeName)"))
        }
        let name = requiredString(root, "name", at: "")
        if let name, !name.isValidPathName {
            issues.append(GraphIssue(.invalidName, at: "/name", "'\(name)' may use only A-Z a-z 0-9 _ . -"))
        } else if let name, name.utf8.count > limits.maxGraphNameBytes {
            issues.append(
                GraphIssue(.invalidName, at: "/name", "the name is \(name.utf8.count) bytes long (limit \(limits.maxGraphNameBytes))"))
        }
        let start = requiredString(root, "start", at: "")
        guard fitsLimits(root) else { return nil }
        var scenes: [String: Scene] = [:]
        if let sceneMembers = root["scenes"] {
            if let sceneObject = sceneMembers.objectValue {
                if sceneObject.isEmpty {
                    issues.append(GraphIssue(.missingField, at: "/scenes", "a graph needs at least one scene"))
                }
                for sceneName in sceneObject.keys.sorted() {
                    if let body = sceneObject[sceneName], let scene = decodeScene(sceneName, body) {
                        scenes[sceneName] = scene
                    }
                }
            } else {
                issues.append(GraphIssue(.invalidType, at: "/scenes", "scenes is an object of scene name → scene"))
            }
        } else {
            issues.append(GraphIssue(.missingField, at: "/scenes", "a graph needs scenes"))
        }
        let links = decodeLinks(root["links"], at: "/links")
        guard let name, let start else { return nil }
        return Graph(name: name, start: start, scenes: scenes, links: links)
    }

    /// Counts the document's scenes and links (global and every scene's) before any is read: a
    /// graph over ``Limits/maxGraphScenes`` or ``Limits/maxGraphLinks`` is refused with one issue
    /// each, without building or validating anything of its size.
    private mutating func fitsLimits(_ root: [String: JSONValue]) -> Bool {
        var fits = true
        let scenes = root["scenes"]?.objectValue ?? [:]
        if scenes.count > limits.maxGraphScenes {
            issues.append(GraphIssue(.tooLarge, at: "/scenes", "the graph has \(scenes.count) scenes (limit \(limits.maxGraphScenes))"))
            fits = false
        }
        var links = root["links"]?.objectValue?.count ?? 0
        for body in scenes.values { links += body.objectValue?["links"]?.objectValue?.count ?? 0 }
        if links > limits.maxGraphLinks {
            issues.append(
                GraphIssue(.tooLarge, at: "/links", "the graph has \(links) links, its scenes' included (limit \(limits.maxGraphLinks))")
            )
            fits = false
        }
        return fits
    }

    private mutating func decodeScene(_ name: String, _ body: JSONValue) -> Scene? {
        let at = pointer("/scenes", name)
        if !name.isValidPathName {
            issues.append(GraphIssue(.invalidName, at: at, "scene name '\(name)' may use only A-Z a-z 0-9 _ . -"))
        } else if Graph.reservedSceneNames.contains(name) {
            issues.append(GraphIssue(.reservedName, at: at, "'\(name)' is reserved for up(n=K)"))
        }
        guard let members = body.objectValue else {
            issues.append(GraphIssue(.invalidType, at: at, "a scene is an object, not \(body.typeName)"))
            return nil
        }
        checkFields(members, allowed: Self.sceneFields, at: at)
        checkDescription(members, at: at)
        var scene = Scene(name: name)
        if let params = members["params"] {
            scene.params = decodeParams(params, at: pointer(at, "params"))
        }
        if let removable = members["removable"] {
            if let flag = removable.boolValue {
                scene.removable = flag
            } else {
                issues.append(GraphIssue(.invalidType, at: pointer(at, "removable"), "removable is a boolean"))
            }
        }
        let container = members["container"]
        let tabs = members["tabs"]
        switch container {
        case nil, .string("screen"):
            if tabs != nil {
                issues.append(GraphIssue(.invalidTabs, at: pointer(at, "tabs"), "tabs need \"container\": \"tabs\""))
            }
        case .string("tabs"):
            scene.kind = .tabs(decodeTabs(tabs, at: pointer(at, "tabs")))
        default:
            issues.append(GraphIssue(.invalidType, at: pointer(at, "container"), "container is \"screen\" or \"tabs\""))
        }
        scene.links = decodeLinks(members["links"], at: pointer(at, "links"))
        scene.inject = decodeNames(members["inject"], at: pointer(at, "inject"))
        scene.requires = decodeNames(members["requires"], at: pointer(at, "requires"))
        if let state = members["state"] {
            if state.objectValue != nil {
                scene.state = state
            } else {
                issues.append(GraphIssue(.invalidType, at: pointer(at, "state"), "state is a JSON object"))
            }
        }
        if let redirect = members["redirect"] {
            if let path = redirect.stringValue {
                scene.redirect = path
            } else {
                issues.append(GraphIssue(.invalidType, at: pointer(at, "redirect"), "redirect is a path, not \(redirect.typeName)"))
            }
        }
        scene.confirmLeave = decodeConfirmLeave(members["confirmLeave"], at: pointer(at, "confirmLeave"))
        scene.commands = decodeCommands(members["commands"], at: pointer(at, "commands"))
        return scene
    }

    /// `true`, `false`, or a JSON pointer into the screen's state.
    private mutating func decodeConfirmLeave(_ value: JSONValue?, at: String) -> LeaveConfirmation? {
        switch value {
        case nil, .bool(false): return nil
        case .bool(true): return .always
        case .string(let text):
            guard let pointer = JSONPointer(text) else {
                issues.append(GraphIssue(.invalidPointer, at: at, "'\(text)' is not a JSON pointer (RFC 6901)"))
                return nil
            }
            return .whileTruthy(pointer)
        case let other?:
            issues.append(GraphIssue(.invalidType, at: at, "confirmLeave is a boolean or a JSON pointer, not \(other.typeName)"))
            return nil
        }
    }

    private mutating func decodeCommands(_ value: JSONValue?, at: String) -> [String: Command] {
        guard let value else { return [:] }
        guard let members = value.objectValue else {
            issues.append(GraphIssue(.invalidType, at: at, "commands is an object of name → {when, patch, navigate}"))
            return [:]
        }
        var commands: [String: Command] = [:]
        for (name, here, body) in namedObjects(
            members, at: at, named: "command", code: .invalidType, shape: "a command is an object {when, patch, navigate}")
        {
            checkFields(body, allowed: Self.commandFields, at: here)
            checkDescription(body, at: here)
            var guards: [Command.Guard] = []
            if let when = body["when"] {
                if let conditions = when.objectValue {
                    for text in conditions.keys.sorted() {
                        let at = pointer(pointer(here, "when"), text)
                        guard let statePointer = JSONPointer(text) else {
                            issues.append(GraphIssue(.invalidPointer, at: at, "'\(text)' is not a JSON pointer (RFC 6901)"))
                            continue
                        }
                        guard let values = conditions[text]?.arrayValue, !values.isEmpty else {
                            issues.append(GraphIssue(.invalidType, at: at, "a guard lists the values it allows: a non-empty array"))
                            continue
                        }
                        guards.append(Command.Guard(pointer: statePointer, values: values))
                    }
                } else {
                    issues.append(GraphIssue(.invalidType, at: pointer(here, "when"), "when is an object of JSON pointer → allowed values"))
                }
            }
            var patch = JSONValue.object([:])
            if let value = body["patch"] {
                if value.objectValue != nil {
                    patch = value
                } else {
                    issues.append(GraphIssue(.invalidType, at: pointer(here, "patch"), "patch is a JSON object (RFC 7396 merge patch)"))
                }
            }
            var navigate: String?
            if let value = body["navigate"] {
                if let path = value.stringValue {
                    navigate = path
                } else {
                    issues.append(GraphIssue(.invalidType, at: pointer(here, "navigate"), "navigate is a path, not \(value.typeName)"))
                }
            }
            commands[name] = Command(guards: guards, patch: patch, navigate: navigate)
        }
        return commands
    }

    private mutating func decodeTabs(_ value: JSONValue?, at: String) -> [String] {
        guard let value else {
            issues.append(GraphIssue(.invalidTabs, at: at, "a tabs scene lists its tab scenes"))
            return []
        }
        guard let elements = value.arrayValue, !elements.isEmpty else {
            issues.append(GraphIssue(.invalidTabs, at: at, "tabs is a non-empty array of scene names"))
            return []
        }
        var names: [String] = []
        for (position, element) in elements.enumerated() {
            guard let name = element.stringValue else {
                issues.append(GraphIssue(.invalidType, at: pointer(at, String(position)), "a tab is a scene name"))
                continue
            }
            if names.contains(name) {
                issues.append(GraphIssue(.invalidTabs, at: pointer(at, String(position)), "tab '\(name)' is listed twice"))
            }
            names.append(name)
        }
        return names
    }

    private mutating func decodeParams(_ value: JSONValue, at: String) -> [String: ParamSpec] {
        guard let members = value.objectValue else {
            issues.append(GraphIssue(.invalidParamSchema, at: at, "params is an object of name → {type, required, default}"))
            return [:]
        }
        var specs: [String: ParamSpec] = [:]
        for (key, here, body) in namedObjects(
            members, at: at, named: "parameter", code: .invalidParamSchema, shape: "a parameter is an object {type, required, default}")
        {
            checkFields(body, allowed: Self.paramFields, at: here)
            checkDescription(body, at: here)
            var spec = ParamSpec(type: .string)
            if let typeValue = body["type"] {
                guard let typeName = typeValue.stringValue, let type = ParamType(rawValue: typeName) else {
                    issues.append(GraphIssue(.invalidParamSchema, at: pointer(here, "type"), "type is one of string, int, number, bool"))
                    continue
                }
                spec.type = type
            }
            if let required = body["required"] {
                if let flag = required.boolValue {
                    spec.required = flag
                } else {
                    issues.append(GraphIssue(.invalidParamSchema, at: pointer(here, "required"), "required is a boolean"))
                }
            }
            if let defaultJSON = body["default"] {
                if spec.required {
                    issues.append(
                        GraphIssue(.invalidParamSchema, at: pointer(here, "default"), "a required parameter cannot have a default"))
                }
                if let text = ParamValue.text(of: defaultJSON), let typed = ParamValue(text: text, as: spec.type),
                    defaultJSON.matches(spec.type)
                {
                    spec.defaultValue = typed
                } else {
                    issues.append(
                        GraphIssue(.invalidParamSchema, at: pointer(here, "default"), "default is not a valid \(spec.type.rawValue)"))
                }
            }
            specs[key] = spec
        }
        return specs
    }

    private mutating func decodeLinks(_ value: JSONValue?, at: String) -> [String: Link] {
        guard let value else { return [:] }
        guard let members = value.objectValue else {
            issues.append(GraphIssue(.invalidType, at: at, "links is an object of name → {path}"))
            return [:]
        }
        var links: [String: Link] = [:]
        for (name, here, body) in namedObjects(
            members, at: at, named: "link", code: .invalidType, shape: "a link is an object with a string \"path\"",
            where: { $0["path"]?.stringValue != nil })
        {
            let template = body["path"]?.stringValue ?? ""
            checkFields(body, allowed: ["path", "description"], at: here)
            checkDescription(body, at: here)
            guard Link.placeholders(in: template) != nil else {
                issues.append(
                    GraphIssue(.invalidTemplate, at: pointer(here, "path"), "unbalanced '{' or invalid placeholder name in '\(template)'"))
                continue
            }
            links[name] = Link(template: template)
        }
        return links
    }

    private mutating func decodeNames(_ value: JSONValue?, at: String) -> [String] {
        guard let value else { return [] }
        guard let elements = value.arrayValue else {
            issues.append(GraphIssue(.invalidType, at: at, "an array of context keys"))
            return []
        }
        var names: [String] = []
        for (position, element) in elements.enumerated() {
            if let name = element.stringValue {
                names.append(name)
            } else {
                issues.append(GraphIssue(.invalidType, at: pointer(at, String(position)), "a context key is a string"))
            }
        }
        return names
    }

    private mutating func requiredString(_ object: [String: JSONValue], _ key: String, at: String) -> String? {
        guard let value = object[key] else {
            issues.append(GraphIssue(.missingField, at: pointer(at, key), "'\(key)' is required"))
            return nil
        }
        guard let text = value.stringValue else {
            issues.append(GraphIssue(.invalidType, at: pointer(at, key), "'\(key)' is a string, not \(value.typeName)"))
            return nil
        }
        return text
    }

    /// Every object of a graph may carry a `description`, for people: a string.
    /// The members of a map of named objects (a scene's commands, params or links), by name: a
    /// name that is not a path name, or a body that is not an object of the right `shape`
    /// (`accepts`), is reported and left out.
    private mutating func namedObjects(
        _ members: [String: JSONValue], at: String, named what: String, code: GraphIssue.Code, shape: String,
        where accepts: ([String: JSONValue]) -> Bool = { _ in true }
    ) -> [(name: String, at: String, body: [String: JSONValue])] {
        var found: [(name: String, at: String, body: [String: JSONValue])] = []
        for name in members.keys.sorted() {
            let here = pointer(at, name)
            guard name.isValidPathName else {
                issues.append(GraphIssue(.invalidName, at: here, "\(what) name '\(name)' may use only A-Z a-z 0-9 _ . -"))
                continue
            }
            guard let body = members[name]?.objectValue, accepts(body) else {
                issues.append(GraphIssue(code, at: here, shape))
                continue
            }
            found.append((name, here, body))
        }
        return found
    }

    private mutating func checkDescription(_ object: [String: JSONValue], at: String) {
        if let description = object["description"], description.stringValue == nil {
            issues.append(GraphIssue(.invalidType, at: pointer(at, "description"), "description is a string, not \(description.typeName)"))
        }
    }

    private mutating func checkFields(_ object: [String: JSONValue], allowed: Set<String>, at: String) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            issues.append(GraphIssue(.unknownField, at: pointer(at, key), "unknown field '\(key)'"))
        }
    }
}

extension JSONValue {
    /// Whether this JSON value has the JSON type a parameter type is written with.
    func matches(_ type: ParamType) -> Bool {
        switch (type, self) {
        case (.string, .string), (.int, .int), (.number, .int), (.number, .double), (.bool, .bool): true
        default: false
        }
    }
}
