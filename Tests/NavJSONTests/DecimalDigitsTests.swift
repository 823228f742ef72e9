import NavJSON
import Testing

/// The one decimal reader (``DecimalDigits/parse(_:sign:leadingZeros:)``) in the three forms
/// navd reads: `If-Match` versions (digits, no leading zero), query parameters (a `-` allowed)
/// and settings (`+` or `-`, as Swift's `Int(_:)`).
@Suite struct DecimalDigitsTests {
    static func parse(_ text: String, _ sign: DecimalDigits.Sign = .none, leadingZeros: Bool = true) -> Int? {
        DecimalDigits.parse(text.utf8, sign: sign, leadingZeros: leadingZeros)
    }

    /// Text, and what each form reads: a version, a query parameter, a setting.
    static let cases: [(String, Int?, Int?, Int?)] = [
        ("0", 0, 0, 0),
        ("7", 7, 7, 7),
        ("1234", 1234, 1234, 1234),
        ("007", nil, 7, 7),
        ("00", nil, 0, 0),
        ("-3", nil, -3, -3),
        ("-0", nil, 0, 0),
        ("+3", nil, nil, 3),
        ("", nil, nil, nil),
        ("-", nil, nil, nil),
        ("+", nil, nil, nil),
        ("+-3", nil, nil, nil),
        ("--3", nil, nil, nil),
        (" 3", nil, nil, nil),
        ("3 ", nil, nil, nil),
        ("3.0", nil, nil, nil),
        ("1e2", nil, nil, nil),
        ("0x10", nil, nil, nil),
        ("3a", nil, nil, nil),
        ("\u{0663}", nil, nil, nil),
        ("9223372036854775807", Int.max, Int.max, Int.max),
        ("9223372036854775808", nil, nil, nil),
        ("-9223372036854775808", nil, Int.min, Int.min),
        ("-9223372036854775809", nil, nil, nil),
        ("99999999999999999999999", nil, nil, nil)
    ]

    @Test(arguments: cases)
    func eachFormReadsItsSyntax(_ text: String, version: Int?, query: Int?, setting: Int?) {
        #expect(Self.parse(text, leadingZeros: false) == version, "version \(text)")
        #expect(Self.parse(text, .minus) == query, "query \(text)")
        #expect(Self.parse(text, .plusOrMinus) == setting, "setting \(text)")
    }

    /// The settings' form reads exactly what `Int(_:)` reads, which it replaced there.
    @Test func theSettingsFormReadsWhatIntReads() {
        let pieces = ["", "+", "-", "0", "1", "9", "00", "42", " ", ".", "x", "922337203685477580", "7", "8"]
        for first in pieces {
            for second in pieces {
                for third in pieces {
                    let text = first + second + third
                    #expect(Self.parse(text, .plusOrMinus) == Int(text), "\(text)")
                }
            }
        }
    }

    /// Any collection of bytes: a slice, a buffer.
    @Test func readsSlicesAndBuffers() {
        let bytes = Array("v=\"42\"".utf8)
        #expect(DecimalDigits.parse(bytes[3..<5]) == 42)
        #expect(bytes.withUnsafeBufferPointer { DecimalDigits.parse(UnsafeBufferPointer(rebasing: $0[3..<5]), leadingZeros: false) } == 42)
    }
}
