import NavJSON

/// The app's scenes and named transitions: the navigation graph a session runs on (docs/design.md, "Graph").
public struct Graph: Sendable, Hashable {
    public var name: String
    /// Where a new session starts, as written in the document.
    public var start: String
    public var scenes: [String: Scene]
    /// Links available whatever is on top.
    public var links: [String: Link]

    public init(name: String, start: String, scenes: [String: Scene], links: [String: Link] = [:]) {
        self.name = name
        self.start = start
        self.scenes = scenes
        self.links = links
    }
}

/// A screen type.
public struct Scene: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case screen
        /// A tab bar: its tab scene names in order; the first is selected by default.
        case tabs([String])
    }

    public var name: String
    /// `nil`: any string parameters are accepted, as DeepTransition does.
    public var params: [String: ParamSpec]?
    public var removable: Bool
    public var kind: Kind
    public var links: [String: Link]
    /// Session-context keys copied into a new screen's `deps`.
    public var inject: [String]
    /// Session-context keys that must be present to enter the scene.
    public var requires: [String]
    /// Initial per-screen state, a JSON object.
    public var state: JSONValue
    /// Where a navigation refused only for unmet `requires` goes instead (docs/design.md, "Redirect and resume"): a path,
    /// resolved against the stage like any other; the refused target waits as the session's
    /// `pending` until a context change satisfies it.
    public var redirect: String?
    /// Whether removing a screen of this scene needs the client to confirm (docs/design.md, "Leave confirmation").
    public var confirmLeave: LeaveConfirmation?
    /// Named changes of a screen's state, each allowed only while its guards hold (UseCaseKit's
    /// Command → UseCase → Store, as a state machine the server owns).
    public var commands: [String: Command]

    public init(
        name: String, params: [String: ParamSpec]? = nil, removable: Bool = true, kind: Kind = .screen,
        links: [String: Link] = [:], inject: [String] = [], requires: [String] = [], state: JSONValue = .object([:]),
        redirect: String? = nil, confirmLeave: LeaveConfirmation? = nil, commands: [String: Command] = [:]
    ) {
        self.name = name
        self.params = params
        self.removable = removable
        self.kind = kind
        self.links = links
        self.inject = inject
        self.requires = requires
        self.state = state
        self.redirect = redirect
        self.confirmLeave = confirmLeave
        self.commands = commands
    }

    public var tabs: [String]? {
        if case .tabs(let names) = kind { return names }
        return nil
    }
}

/// When leaving a screen needs a confirmation: always, or while a value of its state is truthy
/// (``NavJSON/JSONValue/isTruthy``).
public enum LeaveConfirmation: Sendable, Hashable {
    case always
    case whileTruthy(JSONPointer)

    /// Whether leaving a screen whose state is `state` needs a confirmation now.
    public func applies(to state: JSONValue) -> Bool {
        switch self {
        case .always: true
        case .whileTruthy(let pointer): pointer.value(in: state)?.isTruthy ?? false
        }
    }
}

/// A named command of a scene: a merge patch of the screen's state, then an optional navigation,
/// applied together only while every guard holds.
public struct Command: Sendable, Hashable {
    /// A value of the screen's state and the values it may have for the command to apply.
    public struct Guard: Sendable, Hashable {
        public var pointer: JSONPointer
        public var values: [JSONValue]

        public init(pointer: JSONPointer, values: [JSONValue]) {
            self.pointer = pointer
            self.values = values
        }
    }

    /// Checked in order of their pointers' text; the first that fails is named in the refusal.
    public var guards: [Guard]
    /// An RFC 7396 merge patch (an object) whose `{"$arg": "k"}` values take the command's `args.k`.
    public var patch: JSONValue
    /// A path navigated to after the patch, resolved against the stage.
    public var navigate: String?

    public init(guards: [Guard] = [], patch: JSONValue = .object([:]), navigate: String? = nil) {
        self.guards = guards.sorted { $0.pointer.description < $1.pointer.description }
        self.patch = patch
        self.navigate = navigate
    }
}

public enum ParamType: String, Sendable, Hashable, CaseIterable {
    case string, int, number, bool
}

/// A typed parameter value.
public enum ParamValue: Sendable, Hashable {
    case string(String)
    case int(Int)
    case number(Double)
    case bool(Bool)

    /// The canonical text of the value, as it appears in a path.
    public var text: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .number(let number):
            number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : "\(number)"
        case .bool(let flag): flag ? "true" : "false"
        }
    }

    public var json: JSONValue {
        switch self {
        case .string(let text): .string(text)
        case .int(let number): .int(number)
        case .number(let number): .double(number)
        case .bool(let flag): .bool(flag)
        }
    }

    /// Reads `text` as a value of `type`; `nil` when it is not one.
    public init?(text: String, as type: ParamType) {
        switch type {
        case .string:
            self = .string(text)
        case .int:
            guard let number = Int(text) else { return nil }
            self = .int(number)
        case .number:
            // Decimal notation only: no `nan`, `inf` or hexadecimal floats.
            let decimal = text.utf8.allSatisfy { isDigit($0) || "+-.eE".utf8.contains($0) }
            guard decimal, let number = Double(text), number.isFinite else { return nil }
            self = .number(number)
        case .bool:
            switch text {
            case "true": self = .bool(true)
            case "false": self = .bool(false)
            default: return nil
            }
        }
    }

    /// The text a scalar JSON value stands for in a path; `nil` for null, arrays and objects.
    public static func text(of json: JSONValue) -> String? {
        switch json {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): ParamValue.number(number).text
        case .bool(let flag): flag ? "true" : "false"
        case .null, .array, .object: nil
        }
    }
}

/// The schema of one parameter.
public struct ParamSpec: Sendable, Hashable {
    public var type: ParamType
    public var required: Bool
    public var defaultValue: ParamValue?

    public init(type: ParamType, required: Bool = false, defaultValue: ParamValue? = nil) {
        self.type = type
        self.required = required
        self.defaultValue = defaultValue
    }
}

/// A named, parameterised path template (KabuKit's SceneTransition): `show_news(id={id})`.
public struct Link: Sendable, Hashable {
    public var template: String
    /// The `{name}` placeholders of the template, in order of first use.
    public var placeholders: [String]

    public init(template: String) {
        self.template = template
        self.placeholders = Link.placeholders(in: template) ?? []
    }

    /// The placeholder names of a template; `nil` when a brace is unbalanced or a name is invalid.
    static func placeholders(in template: String) -> [String]? {
        var names: [String] = []
        var current: String?
        for character in template {
            switch character {
            case "{":
                guard current == nil else { return nil }
                current = ""
            case "}":
                guard let name = current, name.isValidPathName else { return nil }
                if !names.contains(name) { names.append(name) }
                current = nil
            default:
                if current != nil { current?.append(character) }
            }
        }
        return current == nil ? names : nil
    }

    /// The template with every placeholder replaced by `value(name)`.
    public func filled(_ value: (String) -> String) -> String {
        var result = ""
        var current: String?
        for character in template {
            switch character {
            case "{": current = ""
            case "}":
                if let name = current { result += value(name) }
                current = nil
            default:
                if current != nil { current?.append(character) } else { result.append(character) }
            }
        }
        return result
    }
}
