import NavCore
import Yams

/// Reads graph documents from JSON or YAML text into NavCore's `JSONValue`.
enum GraphDocument {
    struct ReadError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// A document read by its file name: `.yaml`/`.yml` as YAML, anything else as JSON.
    static func read(text: String, fileName: String) throws(ReadError) -> JSONValue {
        if fileName.hasSuffix(".yaml") || fileName.hasSuffix(".yml") { return try yaml(text) }
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw ReadError(message: "\(fileName): not valid JSON: \(error)")
        }
    }

    /// A YAML document, read in time and memory bounded by its length: aliases and deep nesting
    /// are refused before Yams composes it (see `YAMLPreflight`).
    static func yaml(_ text: String) throws(ReadError) -> JSONValue {
        try YAMLPreflight.check(text)
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ReadError(message: "\(error)")
        }
        guard let node else { throw ReadError(message: "the YAML document is empty") }
        return try json(node, depth: 0)
    }

    private static func json(_ node: Node, depth: Int) throws(ReadError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw ReadError(message: "YAML nested too deeply") }
        switch node {
        case .scalar(let scalar):
            if scalar.style != .plain { return .string(scalar.string) }
            if ["~", "null", "Null", "NULL", ""].contains(scalar.string) { return .null }
            if let flag = node.bool { return .bool(flag) }
            if let number = node.int { return .int(number) }
            if let number = node.float, number.isFinite { return .double(number) }
            return .string(scalar.string)
        case .mapping(let mapping):
            var members: [String: JSONValue] = [:]
            for (key, value) in mapping {
                guard let name = key.string else { throw ReadError(message: "YAML mapping keys must be strings") }
                members[name] = try json(value, depth: depth + 1)
            }
            return .object(members)
        case .sequence(let sequence):
            var elements: [JSONValue] = []
            for element in sequence { elements.append(try json(element, depth: depth + 1)) }
            return .array(elements)
        case .alias:
            // Yams composes aliases into copies, and YAMLPreflight refuses them before that.
            throw ReadError(message: "YAML aliases are not supported in graphs")
        }
    }
}
