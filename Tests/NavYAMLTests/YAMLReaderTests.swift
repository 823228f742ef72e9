import NavJSON
import NavYAML
import Testing

/// A value with its case spelt out: `JSONValue`'s `==` holds `.int(1)` and `.double(1)` equal,
/// and these tests are about which one a scalar becomes.
private func exactly(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let flag): "bool(\(flag))"
    case .int(let number): "int(\(number))"
    case .double(let number): "double(\(number))"
    case .string(let text): "string(\(text.debugDescription))"
    case .array(let elements): "[" + elements.map(exactly).joined(separator: ", ") + "]"
    case .object(let members):
        "{" + members.sorted { $0.key < $1.key }.map { "\($0.key.debugDescription): \(exactly($0.value))" }.joined(separator: ", ") + "}"
    }
}

/// The value of `v` in the one-line document `v: <scalar>`.
private func scalar(_ text: String) throws -> JSONValue {
    let document = try YAMLReader.read("v: \(text)\n")
    return try #require(document["v"])
}

@Suite struct YAMLCoreSchemaTests {
    @Test(arguments: ["", "~", "null", "Null", "NULL"])
    func nulls(_ text: String) throws {
        #expect(exactly(try scalar(text)) == "null")
    }

    @Test(arguments: [("true", true), ("True", true), ("TRUE", true), ("false", false), ("False", false), ("FALSE", false)])
    func booleans(_ text: String, _ expected: Bool) throws {
        #expect(exactly(try scalar(text)) == exactly(.bool(expected)))
    }

    @Test(arguments: [
        ("0", 0), ("-0", 0), ("+12", 12), ("-12", -12), ("007", 7), ("0o17", 15), ("0o0", 0), ("0x1F", 31), ("0xff", 255),
        ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min), ("0x7FFFFFFFFFFFFFFF", Int.max)
    ])
    func integers(_ text: String, _ expected: Int) throws {
        #expect(exactly(try scalar(text)) == exactly(.int(expected)))
    }

    @Test(arguments: [
        ("1.5", 1.5), ("-1.5", -1.5), (".5", 0.5), ("+.5", 0.5), ("5.", 5.0), ("1e3", 1000.0), ("1E-2", 0.01), ("+.5e1", 5.0),
        ("1.0", 1.0), ("-0.0", -0.0),
        // A decimal integer beyond Int is a double, as the JSON parser reads one.
        ("9223372036854775808", 9_223_372_036_854_775_808.0)
    ])
    func floats(_ text: String, _ expected: Double) throws {
        #expect(exactly(try scalar(text)) == exactly(.double(expected)))
    }

    /// YAML 1.1's booleans, base-60 numbers, underscores, binary and timestamps are text in 1.2,
    /// as are near misses of every pattern.
    @Test(arguments: [
        "yes", "no", "on", "off", "y", "n", "Yes", "OFF", "tRUE", "nULL", "none",
        "1:30", "-1:30", "190:20:30", "-922337203685477580:7", "1_000", "0b101", "2001-12-14", "12:30:00",
        "0x", "0o", "0o8", "0xG", "-0x1F", "+0o7", "0X1F", "0O17", "1.2.3", "1e", "e5", "1e+", ".", "+", "..5", "-x",
        "+.nan", "-.NaN", ".infinity", "inf", "nan", "NaN", "12abc", "1 2", "0x1F ff"
    ])
    func textThatOnlyLooksLikeAValue(_ text: String) throws {
        #expect(exactly(try scalar(text)) == exactly(.string(text)))
    }

    /// Quoted and block scalars are text whatever they spell.
    @Test(arguments: [
        ("'true'", "true"), ("\"12\"", "12"), ("'null'", "null"), ("''", ""), ("\"\"", ""), ("'~'", "~"), ("\"1.5\"", "1.5"),
        ("\".inf\"", ".inf"), ("|\n  12\n", "12\n"), (">-\n  true\n", "true"), ("\"\\u00e9\\t\"", "é\t")
    ])
    func quotedScalarsAreText(_ text: String, _ expected: String) throws {
        #expect(exactly(try scalar(text)) == exactly(.string(expected)))
    }

    @Test(arguments: [
        ("!!str 12", JSONValue.string("12")), ("!!str true", .string("true")), ("! 12", .string("12")), ("!!str", .string("")),
        ("!!int '12'", .int(12)), ("!!int 0x10", .int(16)), ("!!float 1", .double(1)), ("!!float '2.5'", .double(2.5)),
        ("!!bool \"false\"", .bool(false)), ("!!null ''", .null), ("!!null ~", .null),
        ("!!map {a: 1}", .object(["a": .int(1)])), ("!!seq [1]", .array([.int(1)])), ("! {a: 1}", .object(["a": .int(1)]))
    ])
    func coreTagsAreHonoured(_ text: String, _ expected: JSONValue) throws {
        #expect(exactly(try scalar(text)) == exactly(expected))
    }

    @Test(arguments: [
        ("!!int abc", "'abc' is not a valid !!int"), ("!!int 1.5", "'1.5' is not a valid !!int"),
        ("!!bool yes", "'yes' is not a valid !!bool"),
        ("!!null 0", "'0' is not a valid !!null"), ("!!float x", "'x' is not a valid !!float"),
        ("!!binary aGk=", "the tag !!binary is not supported"), ("!!timestamp 2001-12-14", "the tag !!timestamp is not supported"),
        ("!custom x", "the tag !custom is not supported"), ("!!seq {a: 1}", "the tag !!seq is not supported on a mapping"),
        ("!!map [1]", "the tag !!map is not supported on a sequence")
    ])
    func otherTagsAndMismatchesAreRefused(_ text: String, _ message: String) throws {
        let error = #expect(throws: YAMLError.self) { try scalar(text) }
        #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error))")
        #expect(error?.line == 1 && error?.column == 4, "\(String(describing: error))")
    }

    /// JSON has no infinities, NaN or numbers past `Double`: such a plain scalar is an error
    /// that says how to mean the text, not a silent change of type.
    @Test(arguments: [
        ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1e400", "-1e400", "0x1FFFFFFFFFFFFFFFF", "0o7777777777777777777777",
        String(repeating: "9", count: 400)
    ])
    func numbersJSONCannotHoldAreRefused(_ text: String) throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read("a: 1\nv: \(text)\n") }
        #expect(error?.line == 2 && error?.column == 4, "\(String(describing: error))")
        #expect(error?.message.contains("quote it to mean the text") == true, "\(String(describing: error))")
    }
}

@Suite struct YAMLReaderTests {
    @Test func blockAndFlowCollectionsReadAsJSON() throws {
        let text = """
            name: news
            start: /top
            scenes:
              top: {container: tabs, tabs: [home, news]}
              home: {}
              list_news:
                params:
                  category: {type: int, default: 0}
                links:
                  show: {path: "show_news(id={id})"}
              onboarding: {removable: false}
            empty: []
            """
        let json = """
            {"name": "news", "start": "/top", "empty": [],
             "scenes": {"top": {"container": "tabs", "tabs": ["home", "news"]}, "home": {},
                        "list_news": {"params": {"category": {"type": "int", "default": 0}},
                                      "links": {"show": {"path": "show_news(id={id})"}}},
                        "onboarding": {"removable": false}}}
            """
        #expect(exactly(try YAMLReader.read(text)) == exactly(try JSONValue(parsing: json)))
    }

    /// JSON is YAML: a JSON document reads as the JSON parser reads it.
    @Test func aJSONDocumentReadsAsJSON() throws {
        let json = #"{"a": [1, -2.5, true, false, null, "x\u00e9\n", {"b": {}}], "c": "", "d": 10000000000, "e": [], "f": 1e2}"#
        #expect(exactly(try YAMLReader.read(json)) == exactly(try JSONValue(parsing: json)))
    }

    @Test func keysAreTheirText() throws {
        let document = try YAMLReader.read("200: ok\ntrue: yes\n~: tilde\n1.50: f\n'q': quoted\n\"\": empty\n")
        #expect(
            exactly(document)
                == exactly(
                    .object([
                        "200": .string("ok"), "true": .string("yes"), "~": .string("tilde"), "1.50": .string("f"), "q": .string("quoted"),
                        "": .string("empty")
                    ])))
    }

    @Test(arguments: [
        ("a: 1\nb: 2\na: 3\n", 3, 1, "the key 'a' is given twice in one mapping (first at line 1)"),
        ("{a: 1, \"a\": 2}", 1, 8, "the key 'a' is given twice in one mapping (first at line 1)"),
        ("200: x\n'200': y\n", 2, 1, "the key '200' is given twice in one mapping (first at line 1)"),
        ("s:\n  t:\n    k: 1\n    k: 1\n", 4, 5, "the key 'k' is given twice in one mapping (first at line 3)")
    ])
    func duplicateKeysAreRefused(_ text: String, _ line: Int, _ column: Int, _ message: String) throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(error == YAMLError(line: line, column: column, message: message))
    }

    @Test func theSameKeyInDifferentMappingsIsFine() throws {
        let document = try YAMLReader.read("a: {k: 1}\nb: {k: 2}\nc: [{k: 3}, {k: 4}]\n")
        #expect(document["c"]?.arrayValue?.count == 2)
    }

    @Test(arguments: ["? [a, b]\n: 1\n", "? {a: 1}\n: 2\n", "{[a]: 1}"])
    func collectionsAsKeysAreRefused(_ text: String) throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(error?.message.contains("as a mapping key: keys must be text") == true, "\(String(describing: error))")
    }

    @Test func anchorsAloneAreFine() throws {
        let document = try YAMLReader.read("a: &x 1\nb: &y {c: 2}\n")
        #expect(exactly(document) == exactly(.object(["a": .int(1), "b": .object(["c": .int(2)])])))
    }

    @Test(arguments: [
        ("a: &x 1\nb: *x\n", 2, 4),
        ("base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n", 3, 7),
        ("list: &l [1]\nmore: [*l, *l]\n", 2, 8),
        ("k: &k key\n? *k\n: v\n", 2, 3)
    ])
    func aliasesAreRefusedWhereTheyOccur(_ text: String, _ line: Int, _ column: Int) throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(error?.line == line && error?.column == column, "\(String(describing: error))")
        #expect(error?.message.contains("aliases") == true, "\(String(describing: error))")
    }

    /// Nine levels of ten aliases each: ~500 bytes that stand for 10⁹ strings. Refused at the
    /// first alias, before anything is expanded.
    @Test func aBillionLaughsIsRefusedAtItsFirstAlias() throws {
        var text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        let names = Array("abcdefghi")
        for index in 1..<names.count {
            text +=
                "\(names[index]): &\(names[index]) [" + Array(repeating: "*\(names[index - 1])", count: 10).joined(separator: ", ") + "]\n"
        }
        text += "bomb: *i\n"
        let clock = ContinuousClock()
        let started = clock.now
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(clock.now - started < .seconds(1))
        #expect(error?.line == 2 && error?.column == 8, "\(String(describing: error))")
    }

    @Test func nestingUpToTheJSONLimitReads() throws {
        let depth = JSONValue.maximumDepth
        var value = try YAMLReader.read(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        for _ in 1..<depth { value = try #require(value.arrayValue?.first) }
        #expect(value.arrayValue?.isEmpty == true)
    }

    @Test(arguments: [JSONValue.maximumDepth + 1, 1_000, 100_000])
    func deeperFlowNestingIsRefused(_ depth: Int) throws {
        let text = "x: " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        // The 64th '[' opens the 65th collection (the document's mapping is the first).
        #expect(error == YAMLError(line: 1, column: 4 + JSONValue.maximumDepth - 1, message: "YAML nested deeper than 64 levels"))
    }

    @Test func deeperBlockNestingIsRefused() throws {
        var text = ""
        for level in 0..<200 { text += String(repeating: " ", count: 2 * level) + "k\(level):\n" }
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(error?.message == "YAML nested deeper than 64 levels", "\(String(describing: error))")
        #expect(error?.line == 65, "\(String(describing: error))")
    }

    @Test(arguments: ["", "   \n", "# only a comment\n", "\u{FEFF}"])
    func noDocumentIsAnError(_ text: String) throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(error?.message == "the YAML document is empty", "\(String(describing: error))")
    }

    @Test func explicitDocumentMarkersAndABOMAreFine() throws {
        #expect(exactly(try YAMLReader.read("---\na: 1\n...\n")) == exactly(.object(["a": .int(1)])))
        #expect(exactly(try YAMLReader.read("\u{FEFF}a: 1\n")) == exactly(.object(["a": .int(1)])))
        #expect(exactly(try YAMLReader.read("%YAML 1.2\n---\na: 1\n")) == exactly(.object(["a": .int(1)])))
        #expect(exactly(try YAMLReader.read("---\n")) == "null")
        #expect(exactly(try YAMLReader.read("just text")) == exactly(.string("just text")))
    }

    @Test func aSecondDocumentIsAnError() throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read("a: 1\n---\nb: 2\n") }
        #expect(error?.line == 2 && error?.column == 1, "\(String(describing: error))")
        #expect(error?.message.contains("a second YAML document") == true, "\(String(describing: error))")
    }

    /// libyaml's own errors keep its words and gain a line and a column.
    @Test(arguments: [
        ("name: [shop\nstart: {", 2, 6, "did not find expected ',' or ']' (while parsing a flow sequence started at line 1, column 7)"),
        ("a: b: c\n", 1, 5, "mapping values are not allowed in this context"),
        (
            "a:\n\tb: 1\n", 2, 1,
            "found character that cannot start any token (while scanning for the next token started at line 2, column 1)"
        ),
        ("a: 'open\n", 2, 1, "found unexpected end of stream (while scanning a quoted scalar started at line 1, column 4)"),
        ("a: 1\n b: 2\n", 2, 3, "mapping values are not allowed in this context")
    ])
    func syntaxErrorsNameTheirPosition(_ text: String, _ line: Int, _ column: Int, _ message: String) throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(text) }
        #expect(error == YAMLError(line: line, column: column, message: message))
    }

    @Test func bytesThatAreNotUTF8AreRefusedWithTheirPosition() throws {
        let error = #expect(throws: YAMLError.self) { try YAMLReader.read(Array("a: 1\nbé: ".utf8) + [0xFF]) }
        #expect(error?.line == 2 && error?.column == 5, "\(String(describing: error))")
        #expect(error?.message.contains("UTF-8") == true, "\(String(describing: error))")
        let control = #expect(throws: YAMLError.self) { try YAMLReader.read(Array("a: x\u{7}y".utf8)) }
        #expect(control?.message.contains("control characters") == true, "\(String(describing: control))")
    }

    @Test func theErrorReadsAsAnEditorPosition() {
        #expect("\(YAMLError(line: 3, column: 7, message: "m"))" == "line 3, column 7: m")
    }
}
