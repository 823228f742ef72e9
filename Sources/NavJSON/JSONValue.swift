/// A JSON document as plain data.
///
/// navd reads and writes JSON through this type rather than Foundation's coders:
/// it keeps integers exact, keeps object output deterministic (keys sorted), and
/// is several times faster than `JSONSerialization` on Linux.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// An integer literal that fits in `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// JSON has one kind of number: `.int(2)` and `.double(2.0)` are the same value (both print `2`),
    /// so state written as `2.0` equals itself after a store round trip and a patch to `2` is no change.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let left), .bool(let right)): left == right
        case (.int(let left), .int(let right)): left == right
        case (.double(let left), .double(let right)): left == right
        case (.int(let integer), .double(let double)), (.double(let double), .int(let integer)):
            Int(exactly: double) == integer
        case (.string(let left), .string(let right)): left == right
        case (.array(let left), .array(let right)): left == right
        case (.object(let left), .object(let right)): left == right
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag):
            hasher.combine(1)
            hasher.combine(flag)
        case .int(let number):
            hasher.combine(2)
            hasher.combine(number)
        case .double(let number):
            // A whole double hashes as the integer it equals.
            if let integer = Int(exactly: number) {
                hasher.combine(2)
                hasher.combine(integer)
            } else {
                hasher.combine(3)
                hasher.combine(number)
            }
        case .string(let text):
            hasher.combine(4)
            hasher.combine(text)
        case .array(let elements):
            hasher.combine(5)
            hasher.combine(elements)
        case .object(let members):
            hasher.combine(6)
            hasher.combine(members)
        }
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    public var intValue: Int? {
        switch self {
        case .int(let number): return number
        case .double(let number):
            guard number.rounded() == number, let exact = Int(exactly: number) else { return nil }
            return exact
        default: return nil
        }
    }

    /// The member named `key` of an object; `nil` for a missing member or a non-object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The name of this value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members: [String: JSONValue] = [:]
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
}

extension JSONValue {
    /// RFC 7396 JSON merge patch: `patch` applied to `self`.
    ///
    /// An object patch merges member by member and `null` removes a member;
    /// any other patch replaces the target whole.
    public func mergePatched(with patch: JSONValue) -> JSONValue {
        guard case .object(let patchMembers) = patch else { return patch }
        var result = objectValue ?? [:]
        for (key, value) in patchMembers {
            if value == .null {
                result.removeValue(forKey: key)
            } else {
                result[key] = (result[key] ?? .null).mergePatched(with: value)
            }
        }
        return .object(result)
    }
}
