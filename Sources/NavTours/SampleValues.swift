import NavCore
import NavJSON

/// The parameter values tours send: a param's default when it has one, otherwise a fixed value of
/// its type, so the same graph always gives the same tours.
enum SampleValues {
    static func value(for spec: ParamSpec?) -> JSONValue {
        guard let spec else { return .string("a") }
        if let value = spec.defaultValue { return value.json }
        switch spec.type {
        case .int: return .int(1)
        case .number: return .double(1.5)
        case .bool: return .bool(true)
        case .string: return .string("a")
        }
    }

    /// Values tried, all placeholders alike, when the typed guess is refused (a placeholder used
    /// where no schema says its type, such as a scene name or a param of several scenes).
    static let fallbacks: [JSONValue] = [.int(1), .string("a"), .bool(true)]

    /// A guess for each `{placeholder}` of a link's template: the sample of the param it fills
    /// (`scene(key={placeholder})`), read from that scene's schema.
    static func linkParams(_ link: Link, graph: Graph) -> [String: JSONValue] {
        var specs: [String: ParamSpec?] = [:]
        var component = ""
        var key = ""
        var inParams = false
        var inValue = false
        var placeholder: String?
        for character in link.template {
            if var name = placeholder {
                if character == "}" {
                    if inParams, specs[name] == nil {
                        specs[name] = graph.scenes[component]?.params?[key]
                    }
                    placeholder = nil
                } else {
                    name.append(character)
                    placeholder = name
                }
                continue
            }
            switch character {
            case "{": placeholder = ""
            case "/", "!", "#", "^":
                component = ""
                inParams = false
            case "(":
                inParams = true
                inValue = false
                key = ""
            case ")": inParams = false
            case ",":
                key = ""
                inValue = false
            case "=": inValue = true
            default:
                if !inParams { component.append(character) } else if !inValue { key.append(character) }
            }
        }
        var params: [String: JSONValue] = [:]
        for name in link.placeholders {
            params[name] = value(for: specs[name] ?? nil)
        }
        return params
    }

    /// A scene written with its required params (and nothing else: defaults fill themselves in).
    static func component(_ scene: Scene) -> String {
        let required = (scene.params ?? [:]).filter { $0.value.required }.keys.sorted()
        guard !required.isEmpty else { return scene.name }
        let params = required.map { key in
            "\(key)=\(ParamValue.text(of: value(for: scene.params?[key])) ?? "a")"
        }
        return "\(scene.name)(\(params.joined(separator: ",")))"
    }
}
