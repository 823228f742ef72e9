import NavJSON

/// One problem found in a graph document, located by a JSON pointer (RFC 6901).
public struct GraphIssue: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error
        case warning
    }

    /// Stable codes, one per kind of problem.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidJSON = "invalid_json"
        case invalidType = "invalid_type"
        case missingField = "missing_field"
        case unknownField = "unknown_field"
        case invalidName = "invalid_name"
        case reservedName = "reserved_name"
        case unknownScene = "unknown_scene"
        case invalidTemplate = "invalid_template"
        case invalidStart = "invalid_start"
        case invalidParamSchema = "invalid_param_schema"
        case invalidTabs = "invalid_tabs"
        case invalidPointer = "invalid_pointer"
        case invalidRedirect = "invalid_redirect"
        case redirectCycle = "redirect_cycle"
        /// More bytes, scenes or links than the daemon's limits allow.
        case tooLarge = "too_large"
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
        "\(severity.rawValue): \(pointer.isEmpty ? "/" : pointer): \(code.rawValue): \(message)"
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
