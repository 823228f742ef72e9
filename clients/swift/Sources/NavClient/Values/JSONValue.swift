import OpenAPIRuntime

/// Any JSON value, written as a literal: `["user": "ann", "age": 7, "tags": ["a"], "gone": nil]`.
///
/// The generated types carry free-form JSON (a context, a screen's state, a command's args, a
/// result) as OpenAPIRuntime's containers, which are built from `Any` and throw when a value is
/// not JSON; this type is how NavClient's calls take and give such values instead.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads a value out of a generated container (numbers that are integers come back `.int`).
    public init(_ container: OpenAPIValueContainer) {
        self.init(any: container.value)
    }

    /// Reads an object out of a generated container.
    public init(_ container: OpenAPIObjectContainer) {
        self = .object(container.value.mapValues { JSONValue(any: $0) })
    }

    init(any value: (any Sendable)?) {
        switch value {
        case nil: self = .null
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .int(value)
        case let value as Double: self = .double(value)
        case let value as String: self = .string(value)
        case let value as [(any Sendable)?]: self = .array(value.map { JSONValue(any: $0) })
        case let value as [String: (any Sendable)?]: self = .object(value.mapValues { JSONValue(any: $0) })
        // OpenAPIRuntime keeps only the kinds above; anything else is described rather than lost.
        case let value?: self = .string("\(value)")
        }
    }

    /// The value as OpenAPIRuntime holds it: nil, Bool, Int, Double, String, arrays and dictionaries.
    var anyValue: (any Sendable)? {
        switch self {
        case .null: nil
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.anyValue) as [(any Sendable)?]
        case .object(let members): members.mapValues(\.anyValue) as [String: (any Sendable)?]
        }
    }

    /// The generated container of this value. (It cannot fail: every case is JSON.)
    var container: OpenAPIValueContainer {
        (try? OpenAPIValueContainer(unvalidatedValue: anyValue)) ?? nil
    }

    /// A member of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}

extension [String: JSONValue] {
    /// The generated object container of these members.
    var container: OpenAPIObjectContainer {
        (try? OpenAPIObjectContainer(unvalidatedValue: mapValues(\.anyValue))) ?? OpenAPIObjectContainer()
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
