import NavJSON

/// One problem found in a graph document, located by a JSON pointer (RFC 6901).
public struct GraphIssue: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error
        case warning
    }

    /// Stable codes, each spelled as its name in snake_case (``StableCode``), one per kind of problem.
    public enum Code: StableCode {
        case invalidJSON
        case invalidType
        case missingField
        case unknownField
        case invalidName
        case reservedName
        case unknownScene
        case invalidTemplate
        case invalidStart
        case invalidParamSchema
        case invalidTabs
        case invalidPointer
        case invalidRedirect
        case redirectCycle
        /// More bytes, scenes or links than the daemon's limits allow.
        case tooLarge
    }

    public var pointer: String
    public var code: Code
    public var message: String
    public var severity: Severity

    public init(_ code: Code, at pointer: String, _ message: String, severity: Severity = .error) {
        self.pointer = pointer
        self.code = code
        self.message = message
        self.severity = severity
    }

    public var description: String {
        "\(severity.rawValue): \(pointer.isEmpty ? "/" : pointer): \(code.name): \(message)"
    }
}

/// A graph document that cannot be used, with every problem found in it.
public struct GraphError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Errors first; warnings found on the way are included too.
    public var issues: [GraphIssue]

    public var description: String {
        issues.map(\.description).joined(separator: "\n")
    }
}

/// Builds a JSON pointer, escaping `~` and `/` in reference tokens.
func pointer(_ base: String, _ token: String) -> String {
    base + "/" + token.replacingTilde()
}

extension String {
    fileprivate func replacingTilde() -> String {
        guard contains("~") || contains("/") else { return self }
        var result = ""
        for character in self {
            switch character {
            case "~": result += "~0"
            case "/": result += "~1"
            default: result.append(character)
            }
        }
        return result
    }
}
