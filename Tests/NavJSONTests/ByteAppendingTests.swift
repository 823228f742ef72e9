import NavJSON
import Testing

/// The byte and string builders used on every request write exactly what interpolation would.
@Suite struct ByteAppendingTests {
    @Test(arguments: [0, 7, 9, 10, 99, 100, 12_345, Int(Int32.max), Int.max, -1, Int.min])
    func entityTagsAreTheQuotedVersion(version: Int) {
        #expect(String.etag(version) == "\"\(version)\"")
    }

    @Test(arguments: ["", "k3x9-", "é-", String(repeating: "p", count: 40)], [UInt64(0), 1, 10, 4_294_967_296, .max])
    func decimalsAfterAPrefix(prefix: String, number: UInt64) {
        #expect(String(prefix, decimal: number) == "\(prefix)\(number)")
        #expect(String(prefix, decimal: number, "!") == "\(prefix)\(number)!")
    }

    @Test func textIsAppendedAsItsUTF8() {
        var bytes: [UInt8] = []
        bytes.appendLiteral("route=")
        bytes.appendUTF8("/v1/sessions/{id}")
        bytes.appendUTF8("é")
        bytes.appendUTF8(String(repeating: "x", count: 100))
        #expect(bytes == Array("route=/v1/sessions/{id}é".utf8) + Array(repeating: UInt8(ascii: "x"), count: 100))
    }

    @Test(arguments: [0, 1, 9, 10, 99, 100, 2026, 12_345, Int(Int32.max), Int.max])
    func decimalsAreAppendedPadded(number: Int) {
        var bytes: [UInt8] = []
        bytes.appendDecimal(number)
        #expect(bytes == Array(String(number).utf8))
        bytes = []
        bytes.appendDecimal(number, width: 4)
        let text = String(number)
        #expect(bytes == Array((String(repeating: "0", count: max(0, 4 - text.count)) + text).utf8))
    }

    @Test func negativeNumbersAreWrittenAsZero() {
        var bytes: [UInt8] = []
        bytes.appendDecimal(-5, width: 2)
        #expect(bytes == Array("00".utf8))
    }
}
