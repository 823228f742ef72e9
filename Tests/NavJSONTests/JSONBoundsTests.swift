import NavJSON
import Testing

/// What a JSON document may cost to read is bounded by its length and by `maximumValues`.
@Suite struct JSONBoundsTests {
    static func zeros(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(2 * count + 1)
        for index in 0..<count {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "0"))
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    @Test func aDocumentMayHoldUpToMaximumValues() throws {
        // The array itself is one value.
        let fits = try JSONValue(parsing: Self.zeros(JSONValue.maximumValues - 1))
        #expect(fits.arrayValue?.count == JSONValue.maximumValues - 1)
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: Self.zeros(JSONValue.maximumValues)) }
        #expect(error?.reason == "more than \(JSONValue.maximumValues) values")
    }

    @Test func membersValuesCountButTheirNamesDoNot() throws {
        let object = Array(#"{"a": 1, "b": [2, 3], "c": {"d": null}}"#.utf8)
        #expect(try JSONValue(parsing: object, maximumDepth: 8, maximumValues: 7).objectValue?.count == 3)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: object, maximumDepth: 8, maximumValues: 6) }
    }

    @Test func storesReadWithTheirOwnBounds() throws {
        // A store's read is not held to a client's bound unless it asks.
        let value = try JSONValue(parsing: Self.zeros(JSONValue.maximumValues + 5), maximumDepth: 8)
        #expect(value.arrayValue?.count == JSONValue.maximumValues + 5)
        #expect(try JSONValue(parsing: Self.zeros(9), maximumDepth: 8, maximumValues: 10).arrayValue?.count == 9)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Self.zeros(10), maximumDepth: 8, maximumValues: 10) }
    }
}
