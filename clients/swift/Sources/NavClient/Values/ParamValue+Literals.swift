/// A screen parameter is a string, an integer, a number or a boolean (openapi.yaml `ParamValue`,
/// an `anyOf` of the four, which the generator makes a struct of four optionals): these let a
/// call write `["category": 2]` or `["q": "news"]`.
extension Components.Schemas.ParamValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self.init(value1: value) }
    public init(integerLiteral value: Int) { self.init(value2: value) }
    public init(floatLiteral value: Double) { self.init(value3: value) }
    public init(booleanLiteral value: Bool) { self.init(value4: value) }

    /// The value, as JSON. An integer decodes as both an integer and a number (`anyOf`); it is an
    /// integer here.
    public var json: JSONValue {
        if let value = value2 { return .int(value) }
        if let value = value3 { return .double(value) }
        if let value = value4 { return .bool(value) }
        if let value = value1 { return .string(value) }
        return .null
    }
}
