/// An RFC 6901 JSON pointer: `""` is the whole document, `/a/0/b~1c` names `a`, its element 0,
/// then its member `b/c`.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The reference tokens, unescaped (`~1` → `/`, `~0` → `~`).
    public let tokens: [String]
    /// The pointer as written.
    public let description: String

    /// Reads a pointer; `nil` when it is not one (not empty and not starting with `/`, or a `~`
    /// followed by anything but `0` or `1`).
    public init?(_ text: String) {
        description = text
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { return nil }
        var tokens: [String] = []
        for raw in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            var token: [UInt8] = []
            var escape = false
            for byte in raw {
                if escape {
                    switch byte {
                    case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
                    case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
                    default: return nil
                    }
                    escape = false
                } else if byte == UInt8(ascii: "~") {
                    escape = true
                } else {
                    token.append(byte)
                }
            }
            guard !escape else { return nil }
            tokens.append(String(decoding: token, as: UTF8.self))
        }
        self.tokens = tokens
    }

    /// The value this pointer names in `document`; `nil` when it names nothing there.
    public func value(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let members):
                guard let member = members[token] else { return nil }
                current = member
            case .array(let elements):
                // RFC 6901: decimal digits without leading zeros.
                guard let index = DecimalDigits.parse(token.utf8, leadingZeros: false), elements.indices.contains(index) else {
                    return nil
                }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}

extension JSONValue {
    /// Whether the value counts as "yes" where a graph asks a JSON value a question (a scene's
    /// `confirmLeave` pointer): everything but `null`, `false`, `0`, `""`, `[]` and `{}`.
    public var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let flag): flag
        case .int(let number): number != 0
        case .double(let number): number != 0
        case .string(let text): !text.isEmpty
        case .array(let elements): !elements.isEmpty
        case .object(let members): !members.isEmpty
        }
    }
}
