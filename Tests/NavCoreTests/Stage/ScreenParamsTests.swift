import Testing

@testable import NavCore

/// `ScreenParams`' hand-written `==` and `hash(into:)` are a dictionary's: the same keys with equal
/// values, whatever order they were given in.
@Suite struct ScreenParamsTests {
    static let dictionaries: [[String: ParamValue]] = [
        [:],
        ["id": .int(1)],
        ["id": .int(2)],
        ["id": .string("1")],
        ["ID": .int(1)],
        ["id": .int(1), "ref": .string("r")],
        ["id": .int(1), "ref": .string("s")],
        ["id": .int(1), "ref": .string("r"), "a": .bool(true)],
        ["a": .bool(true), "z": .number(1.5)],
        ["a": .bool(false), "z": .number(1.5)]
    ]

    @Test func equalityIsTheDictionarys() {
        for lhs in Self.dictionaries {
            for rhs in Self.dictionaries {
                #expect((ScreenParams(lhs) == ScreenParams(rhs)) == (lhs == rhs), "\(lhs) and \(rhs)")
            }
        }
    }

    @Test func theOrderOfBuildingDoesNotMatter() {
        for dictionary in Self.dictionaries {
            let sorted = dictionary.sorted { $0.key < $1.key }
            var forwards = ScreenParams()
            for (key, value) in sorted { forwards[key] = value }
            var backwards = ScreenParams()
            for (key, value) in sorted.reversed() { backwards[key] = value }
            let unsorted = ScreenParams(unsorted: sorted.reversed().map { (key: $0.key, value: $0.value) })
            for params in [forwards, backwards, unsorted] {
                #expect(params == ScreenParams(dictionary))
                #expect(params.hashValue == ScreenParams(dictionary).hashValue)
                #expect(params.dictionary == dictionary)
            }
        }
    }

    @Test func aRemovedKeyLeavesTheValueWithoutIt() {
        var params: ScreenParams = ["id": .int(1), "ref": .string("r")]
        params["ref"] = nil
        #expect(params == ["id": .int(1)])
        #expect(params.hashValue == ScreenParams(["id": .int(1)]).hashValue)
    }
}
