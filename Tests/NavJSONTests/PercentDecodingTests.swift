import NavJSON
import Testing

/// The one `%XX` decoder: strict for path segments and path values (a broken escape or bytes
/// that are not UTF-8 are refused), lenient for query arguments (kept as sent, repaired).
@Suite struct PercentDecodingTests {
    static func decode(_ text: [UInt8], strict: Bool) -> String? {
        text.withUnsafeBufferPointer { PercentDecoding.decode($0, strict: strict) }
    }

    @Test(arguments: [
        ("plain", "plain"), ("a%20b", "a b"), ("%2F%2f", "//"), ("%C3%A9t%C3%A9", "été"), ("été", "été"), ("100%25", "100%"), ("", "")
    ])
    func wellFormedTextDecodesTheSameEitherWay(text: String, decoded: String) {
        #expect(Self.decode(Array(text.utf8), strict: true) == decoded)
        #expect(Self.decode(Array(text.utf8), strict: false) == decoded)
    }

    @Test(arguments: [("%", "%"), ("a%4", "a%4"), ("%zz", "%zz"), ("a%FFb", "a\u{FFFD}b"), ("%C3%28", "\u{FFFD}(")])
    func brokenTextIsRefusedStrictlyAndKeptLeniently(text: String, lenient: String) {
        #expect(Self.decode(Array(text.utf8), strict: true) == nil)
        #expect(Self.decode(Array(text.utf8), strict: false) == lenient)
    }

    @Test func rawBytesThatAreNotUTF8() {
        #expect(Self.decode([0x61, 0xFF, 0x62], strict: true) == nil)
        #expect(Self.decode([0x61, 0xFF, 0x62], strict: false) == "a\u{FFFD}b")
    }
}
