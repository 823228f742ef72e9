import Testing

@testable import NavTestSupport
@testable import NavWire

/// `If-Match` field values (RFC 9110 §13.1.1): which session versions each one matches.
@Suite struct IfMatchTests {
    /// A field value and the versions among 1...5 it matches.
    static let cases: [(String, [Int])] = [
        (#""2""#, [2]),
        (#"  "2"  "#, [2]),
        ("*", [1, 2, 3, 4, 5]),
        (" * ", [1, 2, 3, 4, 5]),
        (#""1", "3""#, [1, 3]),
        (#""1","3",,"5""#, [1, 3, 5]),
        (#", "4","#, [4]),
        (#"W/"2""#, []),
        (#"W/"2", "3""#, [3]),
        (#""02""#, []),
        (#""+2""#, []),
        (#""x", "2""#, [2]),
        (#""a,b", "2""#, [2]),
        (#""99999999999999999999999""#, []),
        (#""""#, []),
        ("", []),
        ("2", []),
        (#""2"#, []),
        (#""2" "3""#, []),
        (#""1", *"#, []),
        (#""2", W/"#, []),
        ("w/\"2\"", []),
        ("\"\u{7F}\", \"2\"", [])
    ]

    @Test(arguments: cases)
    func matches(_ value: String, _ versions: [Int]) {
        let precondition = IfMatch(value)
        #expect((1...5).filter(precondition.matches) == versions, "If-Match: \(value)")
    }
}
