import NavCore
import NavJSON

/// Intents in the batch-item form (docs/design.md, "Batches"), the one JSON shape of an intent: the items of
/// `POST …/intents` and the `intent` of a confirmation. `{"navigate": PATH}`, `{"link": NAME,
/// "params"?: {…}}`, `{"exit": {"result"?: V}}`, `{"back": N, "result"?: V}`, `{"params":
/// {"screen", "params"}}`, `{"state": {"screen", "patch"}}`, `{"command": {"screen", "name",
/// "args"?}}`, `{"context": PATCH}`; a whole batch is `{"intents": [item…]}`.
extension Intent {
    /// The intent's JSON.
    package var wireJSON: JSONValue {
        switch self {
        case .navigate(let path): ["navigate": .string(path)]
        case .link(let name, let params): params.isEmpty ? ["link": .string(name)] : ["link": .string(name), "params": .object(params)]
        case .exit(let result): ["exit": .object(result.map { ["result": $0] } ?? [:])]
        case .back(let count, let result):
            result.map { ["back": .int(count), "result": $0] } ?? ["back": .int(count)]
        case .setParams(let screen, let params): ["params": ["screen": .string(screen), "params": .object(params)]]
        case .patchState(let screen, let patch): ["state": ["screen": .string(screen), "patch": patch]]
        case .command(let screen, let name, let args):
            [
                "command": .object(
                    ["screen": .string(screen), "name": .string(name)].merging(args.isEmpty ? [:] : ["args": .object(args)]) { $1 })
            ]
        case .patchContext(let patch): ["context": patch]
        case .batch(let intents): ["intents": .array(intents.map(\.wireJSON))]
        }
    }

    /// Reads one batch item. - Throws: `invalid_request` naming the member at fault (`param`,
    /// prefixed with `prefix`), as every request body's shape error is.
    package init(item json: JSONValue, prefix: String = "") throws(NavError) {
        guard let members = json.objectValue else {
            throw NavError(
                .invalidRequest, "an intent is an object, not \(json.typeName)", param: prefix.isEmpty ? nil : String(prefix.dropLast()))
        }
        func fail(_ message: String, _ member: String) -> NavError {
            let param = prefix + member
            return NavError(.invalidRequest, message, param: param.hasSuffix(".") ? String(param.dropLast()) : param)
        }
        // `params` is a kind of its own, and a link's parameters beside `link`.
        let kinds =
            members["link"] != nil
            ? ["link"] : ["navigate", "exit", "back", "params", "state", "command", "context"].filter { members[$0] != nil }
        guard kinds.count == 1, let kind = kinds.first else {
            throw fail("an intent has exactly one of navigate, link, exit, back, params, state, command, context", "")
        }
        let allowed: Set<String> = kind == "link" ? ["link", "params"] : kind == "back" ? ["back", "result"] : [kind]
        for key in members.keys.sorted() where !allowed.contains(key) { throw fail("unknown field '\(key)'", key) }
        let value = members[kind] ?? .null
        switch kind {
        case "navigate":
            guard let path = value.stringValue else { throw fail("navigate is a path", kind) }
            self = .navigate(path)
        case "link":
            guard let name = value.stringValue else { throw fail("link is a link's name", kind) }
            let params = try Self.object(members["params"] ?? [:], "params", prefix: prefix)
            try Self.checkScalars(params, prefix + "params.")
            self = .link(name: name, params: params)
        case "exit":
            let body = try Self.object(value, kind, prefix: prefix)
            for key in body.keys.sorted() where key != "result" { throw fail("unknown field '\(key)'", "exit.\(key)") }
            self = .exit(result: body["result"])
        case "back":
            guard case .int(let count) = value, count >= 1 else { throw fail("back is a count of screens, at least 1", kind) }
            self = .back(count, result: members["result"])
        case "params":
            let body = try Self.object(value, kind, prefix: prefix)
            try Self.only(body, ["screen", "params"], kind, prefix: prefix)
            let params = try Self.object(body["params"] ?? .null, "params.params", prefix: prefix)
            try Self.checkScalars(params, prefix + "params.params.")
            self = .setParams(screen: try Self.string(body["screen"], "params.screen", prefix: prefix), params: params)
        case "state":
            let body = try Self.object(value, kind, prefix: prefix)
            try Self.only(body, ["screen", "patch"], kind, prefix: prefix)
            let patch = try Self.object(body["patch"] ?? .null, "state.patch", prefix: prefix)
            self = .patchState(screen: try Self.string(body["screen"], "state.screen", prefix: prefix), patch: .object(patch))
        case "command":
            let body = try Self.object(value, kind, prefix: prefix)
            try Self.only(body, ["screen", "name", "args"], kind, prefix: prefix)
            self = .command(
                screen: try Self.string(body["screen"], "command.screen", prefix: prefix),
                name: try Self.string(body["name"], "command.name", prefix: prefix),
                args: try Self.object(body["args"] ?? [:], "command.args", prefix: prefix)
            )
        default:
            self = .patchContext(.object(try Self.object(value, kind, prefix: prefix)))
        }
    }

    /// Reads an intent as a confirmation carries it: one item, or a whole batch.
    package init(confirmed json: JSONValue) throws(NavError) {
        if let items = json["intents"]?.arrayValue, json.objectValue?.count == 1 {
            var intents: [Intent] = []
            for (index, item) in items.enumerated() { intents.append(try Intent(item: item, prefix: "intents.\(index).")) }
            self = .batch(intents)
        } else {
            try self.init(item: json)
        }
    }

    private static func object(_ value: JSONValue, _ member: String, prefix: String) throws(NavError) -> [String: JSONValue] {
        guard let members = value.objectValue else {
            throw NavError(.invalidRequest, "'\(member)' must be an object, not \(value.typeName)", param: prefix + member)
        }
        return members
    }

    private static func string(_ value: JSONValue?, _ member: String, prefix: String) throws(NavError) -> String {
        guard let text = value?.stringValue else {
            throw NavError(.invalidRequest, "'\(member)' is a required string", param: prefix + member)
        }
        return text
    }

    private static func only(_ body: [String: JSONValue], _ keys: Set<String>, _ member: String, prefix: String) throws(NavError) {
        for key in body.keys.sorted() where !keys.contains(key) {
            throw NavError(.invalidRequest, "unknown field '\(key)'", param: prefix + member + "." + key)
        }
    }

    /// Parameter values are strings, numbers or booleans (openapi.yaml `Params`).
    private static func checkScalars(_ params: [String: JSONValue], _ prefix: String) throws(NavError) {
        for key in params.keys.sorted() {
            switch params[key] {
            case .string, .int, .double, .bool: continue
            default: throw NavError(.invalidRequest, "parameter '\(key)' must be a string, number or boolean", param: prefix + key)
            }
        }
    }
}
