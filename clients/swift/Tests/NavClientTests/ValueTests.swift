import Foundation
import NavClient
import OpenAPIRuntime
import Testing

@Suite struct ValueTests {
    /// Params are strings, integers, numbers or booleans, kept apart both ways.
    @Test func paramValuesKeepTheirTypeThroughJSON() throws {
        let params = try JSONDecoder().decode(Components.Schemas.Params.self, from: Data(#"{"i": 7, "d": 1.5, "b": true, "s": "7"}"#.utf8))
        #expect(params.additionalProperties.mapValues(\.json) == ["i": 7, "d": 1.5, "b": true, "s": "7"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let written = String(
            decoding: try encoder.encode(Components.Schemas.Params(additionalProperties: ["i": 7, "s": "x", "b": false])), as: UTF8.self)
        #expect(written == #"{"b":false,"i":7,"s":"x"}"#)
    }

    @Test func jsonValuesRoundTripThroughTheGeneratedContainers() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": ["c": nil]]
        let read = try JSONDecoder().decode(
            OpenAPIValueContainer.self, from: Data(#"{"a": [1, 2.5, "x", true, null], "b": {"c": null}}"#.utf8))
        #expect(JSONValue(read) == value)
        // Written through a request body's container and read back, it is the same value.
        let body = Components.Schemas.CommandRequest(name: "n", args: try OpenAPIObjectContainer(unvalidatedValue: ["v": read.value]))
        let again = try JSONDecoder().decode(Components.Schemas.CommandRequest.self, from: try JSONEncoder().encode(body))
        #expect(again.args.map(JSONValue.init) == ["v": value])
        #expect(value["a"] == [1, 2.5, "x", true, nil])
        #expect(value["z"] == nil)
    }
}
