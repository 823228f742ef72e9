import NavJSON
import NavCore
import Yams

/// Reads graph documents from JSON or YAML text into NavCore's `JSONValue`.
package enum GraphDocument {
    package struct ReadError: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }

        package init(message: String) {
            self.message = message
        }
    }

    /// A document read by its file name: `.yaml`/`.yml` as YAML, anything else as JSON.
    package static func read(text: String, fileName: String) throws(ReadError) -> JSONValue {
        if fileName.hasSuffix(".yaml") || fileName.hasSuffix(".yml") { return try yaml(text) }
        do {
            return try JSONValue(parsing: text)
        } catch {
            throw ReadError(message: "\(fileName): not valid JSON: \(error)")
        }
    }

    /// A YAML document, read in time and memory bounded by its length: aliases and deep nesting
    /// are refused before Yams composes it (see `YAMLPreflight`).
    package static func yaml(_ text: String) throws(ReadError) -> JSONValue {
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
            if let number = integer(node, scalar.string) { return .int(number) }
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

    /// `node.int`, except for YAML 1.1's base-60 integers (`1:30` is 90): Yams adds and
    /// multiplies their digits with trapping arithmetic, so `-922337203685477580:7`, or a dozen
    /// `:0`s, crashed the daemon (found by fuzzing). Read here as Yams reads them (underscores
    /// dropped, a sign, `:`-separated decimal digits), with overflow checks: one that does not
    /// fit an `Int` is no integer (and then reads as a number or text, as a plain scalar does).
    private static func integer(_ node: Node, _ text: String) -> Int? {
        guard text.contains(":") else { return node.int }
        var digits = Substring(text.replacingOccurrences(of: "_", with: ""))
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        // Yams reads a leading 0 as a radix prefix (`0x`, `0o`, `0b`, `0`), never as base 60.
        if digits.hasPrefix("0") { return node.int }
        var value = 0
        var base = 1
        for (position, part) in digits.split(separator: ":", omittingEmptySubsequences: false).reversed().enumerated() {
            guard let digit = Int(part, radix: 10) else { return nil }
            if position > 0 {
                let (next, overflow) = base.multipliedReportingOverflow(by: 60)
                guard !overflow else { return nil }
                base = next
            }
            let (scaled, overflowScaling) = digit.multipliedReportingOverflow(by: base)
            let (sum, overflowAdding) = value.addingReportingOverflow(scaled)
            guard !overflowScaling, !overflowAdding else { return nil }
            value = sum
        }
        return negative ? (value == Int.min ? nil : -value) : value
    }
}
