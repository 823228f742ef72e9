import Testing

@testable import NavStoreSQLite

/// ``SessionCache/cost(snapshot:)`` counts sixteen bytes at a time: it must count what a
/// byte-by-byte pass counts, at every length and alignment, and past the 255 chunks its lane
/// counters hold before they are added up.
@Suite struct SessionCostTests {
    static func byteByByte(_ snapshot: [UInt8]) -> Int {
        let commas = snapshot.filter { $0 == UInt8(ascii: ",") }.count
        let openings = snapshot.filter { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }.count
        return 512 + snapshot.count * 2 + commas * 40 + openings * 160
    }

    @Test func countsWhatAByteByBytePassCounts() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#",[{]}"a0:x ,{["#.utf8)
        for length in Array(0...70) + [255 * 16 - 1, 255 * 16, 255 * 16 + 17, 20_000, 70_001] {
            let snapshot = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            #expect(SessionCache.cost(snapshot: snapshot) == Self.byteByByte(snapshot), "length \(length)")
        }
        // Every byte counted: lanes that would overflow if not added up in time.
        for byte in Array(",[{".utf8) {
            let snapshot = [UInt8](repeating: byte, count: 255 * 16 * 3 + 5)
            #expect(SessionCache.cost(snapshot: snapshot) == Self.byteByByte(snapshot))
        }
    }
}
