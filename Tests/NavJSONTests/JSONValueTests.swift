import NavJSON
import Testing

/// NavCore's own JSON: RFC 8259 reading, deterministic compact writing, RFC 7396 merge patch.
@Suite struct JSONValueTests {
    // MARK: Round trips

    /// A JSON text and its canonical print (compact, keys sorted).
    struct RoundTrip: CustomTestStringConvertible, Sendable {
        let input: String
        let printed: String
        var testDescription: String { input }
    }

    static let roundTrips: [RoundTrip] = [
        .init(input: "null", printed: "null"),
        .init(input: " true ", printed: "true"),
        .init(input: "false", printed: "false"),
        .init(input: "0", printed: "0"),
        .init(input: "-12", printed: "-12"),
        .init(input: "0.5", printed: "0.5"),
        .init(input: "-2.25e3", printed: "-2250"),
        .init(input: #""""#, printed: #""""#),
        .init(input: #""héllo 日本""#, printed: #""héllo 日本""#),
        .init(input: "[]", printed: "[]"),
        .init(input: "{}", printed: "{}"),
        .init(input: "[1, [2, [3, []]], {}]", printed: "[1,[2,[3,[]]],{}]"),
        .init(input: #"{"b": 1, "a": [true, null], "c": {"z": "", "y": {}}}"#, printed: #"{"a":[true,null],"b":1,"c":{"y":{},"z":""}}"#),
        .init(input: "\t\r\n {\"k\" :\n\"v\"\r} \n", printed: #"{"k":"v"}"#)
    ]

    @Test(arguments: roundTrips)
    func printParsePrint(_ roundTrip: RoundTrip) throws {
        let value = try JSONValue(parsing: roundTrip.input)
        #expect(value.jsonString == roundTrip.printed)
        let again = try JSONValue(parsing: value.jsonString)
        #expect(again == value)
        #expect(again.jsonBytes == value.jsonBytes)
    }

    @Test func equalValuesGiveEqualBytes() throws {
        let one = try JSONValue(parsing: #"{"z": 1, "a": 2, "m": {"y": [1, 2], "b": null}}"#)
        let two = try JSONValue(parsing: #"{"m": {"b": null, "y": [1, 2]}, "a": 2, "z": 1}"#)
        #expect(one == two)
        #expect(one.jsonBytes == two.jsonBytes)
        #expect(one.jsonString == #"{"a":2,"m":{"b":null,"y":[1,2]},"z":1}"#)
    }

    @Test func literalsBuildValues() {
        let value: JSONValue = ["a": [1, 2.5, "x", true, nil], "b": [:]]
        #expect(value == .object(["a": .array([.int(1), .double(2.5), .string("x"), .bool(true), .null]), "b": .object([:])]))
        #expect(value["a"]?.arrayValue?.count == 5)
        #expect(value["missing"] == nil)
        #expect(JSONValue.string("x")["a"] == nil)
        #expect(value.typeName == "object")
    }

    // MARK: Strings and escapes

    struct Escape: CustomTestStringConvertible, Sendable {
        let json: String
        let text: String
        let printed: String
        var testDescription: String { json }
    }

    static let escapes: [Escape] = [
        .init(json: #""\"""#, text: "\"", printed: #""\"""#),
        .init(json: #""\\""#, text: "\\", printed: #""\\""#),
        .init(json: #""\/""#, text: "/", printed: #""/""#),
        .init(json: #""\b\f""#, text: "\u{8}\u{C}", printed: #""\u0008\u000C""#),
        .init(json: #""\n\r\t""#, text: "\n\r\t", printed: #""\n\r\t""#),
        .init(json: #""\u0000\u001f""#, text: "\u{0}\u{1F}", printed: #""\u0000\u001F""#),
        .init(json: #""\u0041\u00e9\u65E5""#, text: "Aé日", printed: #""Aé日""#),
        .init(json: #""a\u0022b""#, text: "a\"b", printed: #""a\"b""#),
        .init(json: "\"\u{7F}\"", text: "\u{7F}", printed: "\"\u{7F}\""),
        // Surrogate pairs: one scalar outside the BMP, written back as raw UTF-8.
        .init(json: #""\ud83d\ude00""#, text: "😀", printed: #""😀""#),
        .init(json: #""\uD834\uDD1E!""#, text: "𝄞!", printed: #""𝄞!""#),
        .init(json: #""x\uDBFF\uDFFFy""#, text: "x\u{10FFFF}y", printed: "\"x\u{10FFFF}y\""),
        .init(json: "\"😀\"", text: "😀", printed: "\"😀\"")
    ]

    @Test(arguments: escapes)
    func escape(_ escape: Escape) throws {
        let value = try JSONValue(parsing: escape.json)
        #expect(value == .string(escape.text))
        #expect(value.jsonString == escape.printed)
        #expect(try JSONValue(parsing: value.jsonString) == value)
    }

    @Test func everyControlCharacterIsEscapedAndReadBack() throws {
        let text = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        let printed = JSONValue.string(text).jsonString
        #expect(!printed.utf8.contains { $0 < 0x20 })
        #expect(try JSONValue(parsing: printed) == .string(text))
    }

    /// The writer copies eight bytes at a time until one needs an escape: put every kind of
    /// escaped byte at every position of strings up to 40 bytes long (and a multi-byte
    /// character beside it) and compare with a byte-at-a-time reference.
    @Test func escapesAtEveryPositionMatchTheReference() throws {
        for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}", "é", "\u{7F}", " "] {
            for length in 0...40 {
                for position in 0...length {
                    let text = String(repeating: "a", count: position) + special + String(repeating: "z", count: length - position)
                    let printed = JSONValue.string(text).jsonString
                    #expect(Array(printed.utf8) == Self.referenceEscaped(text), "\(Array(text.utf8))")
                    #expect(try JSONValue(parsing: printed) == .string(text))
                }
            }
        }
    }

    static func referenceEscaped(_ text: String) -> [UInt8] {
        var out = Array("\"".utf8)
        for byte in text.utf8 {
            switch byte {
            case 0x22: out += Array("\\\"".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0..<0x20:
                out += Array(
                    ("\\u00" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)).utf8)
            default: out.append(byte)
            }
        }
        return out + Array("\"".utf8)
    }

    @Test func integersOfEveryLengthPrint() {
        var values: [Int] = [0, 1, 9, 10, 99, 100, Int.max, Int.min, Int.min + 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        for value in values {
            #expect(JSONValue.int(value).jsonString == String(value))
            var writer = JSONWriter(reservingCapacity: 0)
            for _ in 0..<50 { writer.writeInt(value) }
            #expect(writer.bytes == Array(String(repeating: String(value), count: 50).utf8))
            #expect(writer.finish() == Array(String(repeating: String(value), count: 50).utf8))
        }
    }

    /// `finish()` hands over exactly what `bytes` shows, whether the buffer grew or not.
    @Test(arguments: [0, 16, 4096])
    func finishingGivesTheWrittenBytes(capacity: Int) {
        var writer = JSONWriter(reservingCapacity: capacity)
        let value: JSONValue = .object(["a": .array([.int(1), .string("x\"y")]), "b": .null])
        writer.write(value)
        let shown = writer.bytes
        #expect(writer.finish() == shown)
        #expect(shown == Array(#"{"a":[1,"x\"y"],"b":null}"#.utf8))
    }

    /// A cursor writes the bytes of the plain writes, wherever the buffer's room ends (so also
    /// when a string is measured to see whether it fits); a run that does not fit keeps nothing.
    @Test func directWritesMatchThePlainWrites() {
        let texts = ["", "a", "e12", "show_news", "a\"b\\c\n\u{01}\u{1F}é日本\u{7F}", String(repeating: "x\"", count: 30)]
        var fits = 0
        var overflows = 0
        for capacity in 0...200 {
            for text in texts {
                for number in [0, -42, Int.min, Int.max] {
                    var plain = JSONWriter()
                    plain.writeLiteral("{")
                    plain.writeLiteral("[")
                    plain.writeString(text)
                    plain.writeLiteral(",")
                    plain.writeInt(number)
                    plain.writeLiteral("]")
                    var direct = JSONWriter(reservingCapacity: capacity)
                    direct.writeLiteral("{")
                    let fit = direct.writeDirect(estimate: 0) { cursor in
                        cursor.literal("[")
                        cursor.string(text)
                        cursor.literal(",")
                        cursor.int(number)
                        cursor.literal("]")
                    }
                    if fit {
                        fits += 1
                        #expect(direct.bytes == plain.bytes, "\(capacity) \(text) \(number)")
                    } else {
                        overflows += 1
                        #expect(direct.bytes == Array("{".utf8))
                        direct.writeLiteral("[")
                        #expect(direct.finish() == Array("{[".utf8))
                    }
                    var reserved = JSONWriter(reservingCapacity: capacity)
                    reserved.writeLiteral("{")
                    let estimate = 2 + text.utf8.count * 6 + 2 + 1 + 21
                    #expect(
                        reserved.writeDirect(estimate: estimate) { cursor in
                            cursor.literal("[")
                            cursor.string(text)
                            cursor.literal(",")
                            cursor.int(number)
                            cursor.literal("]")
                        })
                    #expect(reserved.finish() == plain.bytes)
                }
            }
        }
        #expect(fits > 0 && overflows > 0)
    }

    // MARK: Numbers

    struct Number: CustomTestStringConvertible, Sendable {
        let json: String
        let value: JSONValue
        var testDescription: String { json }
    }

    static let numbers: [Number] = [
        .init(json: "0", value: .int(0)),
        .init(json: "-0", value: .int(0)),
        .init(json: "42", value: .int(42)),
        .init(json: "-7", value: .int(-7)),
        .init(json: "9223372036854775807", value: .int(Int.max)),
        .init(json: "-9223372036854775808", value: .int(Int.min)),
        // An integer literal that does not fit in Int is a double.
        .init(json: "9223372036854775808", value: .double(9_223_372_036_854_775_808)),
        .init(json: "1.5", value: .double(1.5)),
        .init(json: "-0.25", value: .double(-0.25)),
        .init(json: "1e2", value: .double(100)),
        .init(json: "1E-2", value: .double(0.01)),
        .init(json: "2.5e+3", value: .double(2500)),
        .init(json: "1.0", value: .double(1))
    ]

    @Test(arguments: numbers)
    func number(_ number: Number) throws {
        let value = try JSONValue(parsing: number.json)
        switch (value, number.value) {
        case (.int(let got), .int(let want)): #expect(got == want)
        case (.double(let got), .double(let want)): #expect(got == want)
        default: Issue.record("\(number.json) parsed as \(value), expected \(number.value)")
        }
    }

    @Test func integersAndDoublesPrint() {
        #expect(JSONValue.int(42).jsonString == "42")
        #expect(JSONValue.int(Int.min).jsonString == "-9223372036854775808")
        #expect(JSONValue.double(0.5).jsonString == "0.5")
        #expect(JSONValue.double(-1.25).jsonString == "-1.25")
        // A whole double prints without a fraction, as JavaScript does.
        #expect(JSONValue.double(2).jsonString == "2")
        #expect(JSONValue.double(1e20).jsonString == "1e+20")
        #expect(JSONValue.double(.nan).jsonString == "null")
        #expect(JSONValue.double(.infinity).jsonString == "null")
        #expect(JSONValue.double(0.1).jsonString == "0.1")
    }

    @Test func intValueReadsWholeNumbers() {
        #expect(JSONValue.int(3).intValue == 3)
        #expect(JSONValue.double(3).intValue == 3)
        #expect(JSONValue.double(3.5).intValue == nil)
        #expect(JSONValue.double(1e300).intValue == nil)
        #expect(JSONValue.string("3").intValue == nil)
    }

    /// JSON has one kind of number: `2` and `2.0` are the same value, however they were written.
    @Test func wholeDoubleEqualsInteger() throws {
        #expect(JSONValue.int(2) == .double(2))
        #expect(JSONValue.double(-0.0) == .int(0))
        #expect(JSONValue.int(2) != .double(2.5))
        #expect(JSONValue.int(Int.max) != .double(9_223_372_036_854_775_808))
        #expect(JSONValue.int(9_007_199_254_740_993) != .double(9_007_199_254_740_992))
        let written = try JSONValue(parsing: #"{"zoom": 2.0, "list": [1.0, 3]}"#)
        let reread = try JSONValue(parsing: written.jsonString)
        #expect(written == reread)
        #expect(Set([written, reread]).count == 1)
        #expect(Set([JSONValue.int(2), .double(2), .double(2.5)]).count == 2)
    }

    // MARK: Errors

    struct Bad: CustomTestStringConvertible, Sendable {
        let json: String
        let offset: Int
        var testDescription: String { json.isEmpty ? "(empty)" : json }
    }

    static let bad: [Bad] = [
        .init(json: "", offset: 0),
        .init(json: "   ", offset: 3),
        .init(json: "nul", offset: 0),
        .init(json: "tru", offset: 0),
        .init(json: "True", offset: 0),
        .init(json: "01", offset: 1),
        .init(json: "1.", offset: 2),
        .init(json: ".5", offset: 0),
        .init(json: "-", offset: 1),
        .init(json: "+1", offset: 0),
        .init(json: "1e", offset: 2),
        .init(json: "1e400", offset: 0),
        .init(json: "-1e400", offset: 0),
        .init(json: "[1,]", offset: 3),
        .init(json: "[1 2]", offset: 3),
        .init(json: #"{"a" 1}"#, offset: 5),
        .init(json: #"{"a": 1,}"#, offset: 8),
        .init(json: #"{a: 1}"#, offset: 1),
        .init(json: #"{"a": 1, "a": 2}"#, offset: 15),
        .init(json: "{} {}", offset: 3),
        .init(json: "\"tab\there\"", offset: 4),
        .init(json: #""\x""#, offset: 3),
        .init(json: #""\u12""#, offset: 3),
        .init(json: #""\ud83d""#, offset: 7),
        .init(json: #""\ude00""#, offset: 7),
        .init(json: #""\ud83d\u0041""#, offset: 13),
        .init(json: #""abc"#, offset: 4),
        .init(json: "\"\\", offset: 2)
    ]

    @Test(arguments: bad)
    func malformed(_ bad: Bad) {
        do {
            let value = try JSONValue(parsing: bad.json)
            Issue.record("parsed as \(value)")
        } catch {
            #expect(error.offset == bad.offset, "\(error)")
        }
    }

    /// Strings without escapes are read in place when they are ASCII and validated otherwise:
    /// every printable ASCII byte, at lengths on both sides of the small-string limit, and the
    /// same with a non-ASCII character or an invalid byte after them.
    @Test func unescapedStringsReadBack() throws {
        let printable = (UInt8(0x20)...0x7F).filter { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        for length in [0, 1, 7, 15, 16, 17, 40, printable.count] {
            let ascii = Array(printable.prefix(length))
            let text = String(decoding: ascii, as: UTF8.self)
            #expect(try JSONValue(parsing: [0x22] + ascii + [0x22]) == .string(text))
            #expect(try JSONValue(parsing: [0x22] + ascii + Array("é".utf8) + [0x22]) == .string(text + "é"))
            #expect(try JSONValue(parsing: Array(#"{"k":""#.utf8) + ascii + Array(#""}"#.utf8)) == .object(["k": .string(text)]))
            #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22] + ascii + [0xFF, 0x22]) }
        }
    }

    @Test func invalidUTF8IsAnError() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0x5C, 0x6E, 0xFE, 0x22]] {
            #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        }
    }

    // MARK: Depth

    @Test func nestingUpToTheMaximumParses() throws {
        let depth = JSONValue.maximumDepth
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try JSONValue(parsing: arrays).jsonString == arrays)
        let objects = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        #expect(try JSONValue(parsing: objects).jsonString == objects)
    }

    @Test(arguments: [JSONValue.maximumDepth + 1, 1_000, 100_000])
    func nestingBeyondTheMaximumIsAnError(_ depth: Int) {
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: arrays) }
        #expect(error?.offset == JSONValue.maximumDepth)
        #expect(error?.reason == "nesting deeper than \(JSONValue.maximumDepth)")
        let mixed = String(repeating: #"{"k":["#, count: depth)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: mixed) }
        let unclosed = String(repeating: "[", count: depth)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: unclosed) }
    }

    // MARK: Truncation

    static let sample = #"""
        {"id":"s1","graph":"news","version":12,"path":"/top/list_news(category=0)","ratio":-1.5e-3,
         "screens":[{"id":"e1","scene":"top","params":{},"state":{"editing":false,"tags":["a\"b","\u00e9\ud83d\ude00"]}},
                    {"id":"e2","scene":"list_news","params":{"category":0},"deps":null,"ok":true}],
         "context":{"user":"u1","locale":"ja","emoji":"😀"}}
        """#

    @Test func sampleParses() throws {
        let value = try JSONValue(parsing: Self.sample)
        #expect(value["version"] == 12)
        #expect(value["screens"]?.arrayValue?.count == 2)
    }

    @Test func everyTruncationOfTheSampleThrows() {
        let bytes = Array(Self.sample.utf8)
        var failures: [Int] = []
        for length in 0..<bytes.count {
            if (try? JSONValue(parsing: bytes[..<length])) != nil { failures.append(length) }
        }
        #expect(failures.isEmpty, "prefixes that parsed: \(failures)")
    }

    @Test func everySingleByteCorruptionIsHandled() {
        // Not every corruption is invalid, but none may crash.
        let bytes = Array(Self.sample.utf8)
        for position in stride(from: 0, to: bytes.count, by: 3) {
            for replacement: UInt8 in [0x00, 0x22, 0x5C, 0x7B, 0x5D, 0xFF] {
                var corrupted = bytes
                corrupted[position] = replacement
                _ = try? JSONValue(parsing: corrupted)
            }
        }
    }

    // MARK: RFC 7396 merge patch (Appendix A)

    struct Patch: CustomTestStringConvertible, Sendable {
        let original: String
        let patch: String
        let result: String
        var testDescription: String { "\(original) + \(patch)" }
    }

    static let rfc7396: [Patch] = [
        .init(original: #"{"a":"b"}"#, patch: #"{"a":"c"}"#, result: #"{"a":"c"}"#),
        .init(original: #"{"a":"b"}"#, patch: #"{"b":"c"}"#, result: #"{"a":"b","b":"c"}"#),
        .init(original: #"{"a":"b"}"#, patch: #"{"a":null}"#, result: #"{}"#),
        .init(original: #"{"a":"b","b":"c"}"#, patch: #"{"a":null}"#, result: #"{"b":"c"}"#),
        .init(original: #"{"a":["b"]}"#, patch: #"{"a":"c"}"#, result: #"{"a":"c"}"#),
        .init(original: #"{"a":"c"}"#, patch: #"{"a":["b"]}"#, result: #"{"a":["b"]}"#),
        .init(original: #"{"a":{"b":"c"}}"#, patch: #"{"a":{"b":"d","c":null}}"#, result: #"{"a":{"b":"d"}}"#),
        .init(original: #"{"a":[{"b":"c"}]}"#, patch: #"{"a":[1]}"#, result: #"{"a":[1]}"#),
        .init(original: #"["a","b"]"#, patch: #"["c","d"]"#, result: #"["c","d"]"#),
        .init(original: #"{"a":"b"}"#, patch: #"["c"]"#, result: #"["c"]"#),
        .init(original: #"{"a":"foo"}"#, patch: #"null"#, result: #"null"#),
        .init(original: #"{"a":"foo"}"#, patch: #""bar""#, result: #""bar""#),
        .init(original: #"{"e":null}"#, patch: #"{"a":1}"#, result: #"{"e":null,"a":1}"#),
        .init(original: #"[1,2]"#, patch: #"{"a":"b","c":null}"#, result: #"{"a":"b"}"#),
        .init(original: #"{}"#, patch: #"{"a":{"bb":{"ccc":null}}}"#, result: #"{"a":{"bb":{}}}"#),
        // Beyond the appendix: the original example of section 1.
        .init(
            original:
                #"{"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},"tags":["example","sample"],"content":"This will be unchanged"}"#,
            patch: #"{"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},"tags":["example"]}"#,
            result:
                #"{"title":"Hello!","author":{"givenName":"John"},"tags":["example"],"content":"This will be unchanged","phoneNumber":"+01-123-456-7890"}"#
        )
    ]

    @Test(arguments: rfc7396)
    func mergePatch(_ patch: Patch) throws {
        let original = try JSONValue(parsing: patch.original)
        let result = original.mergePatched(with: try JSONValue(parsing: patch.patch))
        #expect(result == (try JSONValue(parsing: patch.result)))
    }

    @Test func mergePatchIsIdempotent() throws {
        for patch in Self.rfc7396 {
            let original = try JSONValue(parsing: patch.original)
            let change = try JSONValue(parsing: patch.patch)
            let once = original.mergePatched(with: change)
            #expect(once.mergePatched(with: change) == once, "\(patch.testDescription)")
        }
    }

    @Test func parseErrorDescription() {
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a" 1}"#) }
        #expect(error?.description == "expected ':' at byte 5")
    }
}

/// What a writer's buffer holds once written: about the text, never the worst case of escaping it.
@Suite struct JSONWriterRoomTests {
    /// A long string is written in a buffer grown by what it needs (at most doubling), every
    /// escape in place; kept bytes (`finishFitted`) are cut to about their size.
    @Test(arguments: [60_000, 5_000, 100])
    func aLongStringGrowsTheBufferByWhatItNeeds(length: Int) throws {
        let pieces = ["a", "\"", "\\", "\n", "\u{01}", "é", "\t", "xyzxyzxy"]
        let text = (0..<length).map { pieces[$0 % 3 == 0 ? $0 % pieces.count : 0] }.joined()
        var writer = JSONWriter(reservingCapacity: 64)
        writer.write(["note": .string(text)])
        let bytes = writer.finish()
        #expect(try JSONValue(parsing: bytes) == ["note": .string(text)])
        #expect(bytes.capacity <= 2 * bytes.count + 64, "\(bytes.count) bytes in \(bytes.capacity)")
        var kept = JSONWriter(reservingCapacity: 64)
        kept.write(.string(text))
        let fitted = kept.finishFitted()
        #expect(fitted.capacity <= fitted.count + max(256, fitted.count / 8), "\(fitted.count) bytes in \(fitted.capacity)")
        #expect(fitted == Array(bytes.dropFirst(8).dropLast()))
    }
}
