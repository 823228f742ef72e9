import NavJSON
import Testing

/// RFC 3339 times in UTC, to the millisecond: written by every feed record, read from `since`.
@Suite struct TimestampTests {
    @Test func writesUTCToTheMillisecond() {
        #expect(Timestamp.text(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.text(milliseconds: 1_800_000_000_123) == "2027-01-15T08:00:00.123Z")
        #expect(Timestamp.text(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp.text(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.text(milliseconds: 1_800_000_000_123, withMilliseconds: false) == "2027-01-15T08:00:00")
    }

    /// A writer writes the same text quoted, in place, after what it holds and into a full buffer.
    @Test(arguments: [Int64(0), 951_782_400_000, -1, 1_800_000_000_123, 253_402_300_799_999])
    func aWriterWritesTheSameTextQuoted(milliseconds: Int64) {
        var writer = JSONWriter(reservingCapacity: 16)
        writer.writeLiteral("[")
        writer.writeTimestamp(milliseconds: milliseconds)
        writer.writeLiteral("]")
        #expect(String(decoding: writer.finish(), as: UTF8.self) == "[\"\(Timestamp.text(milliseconds: milliseconds))\"]")
    }

    @Test func readsWhatItWritesAndOffsets() {
        for milliseconds: Int64 in [0, 1_800_000_000_123, 951_782_400_000, 4_102_444_799_999] {
            #expect(Timestamp.milliseconds(parsing: Timestamp.text(milliseconds: milliseconds)) == milliseconds)
        }
        #expect(Timestamp.milliseconds(parsing: "2027-01-15T09:00:00+01:00") == 1_800_000_000_000)
        #expect(Timestamp.milliseconds(parsing: "2027-01-15t08:00:00.1234567z") == 1_800_000_000_123)
        #expect(Timestamp.milliseconds(parsing: "2027-01-15T08:00:00.5Z") == 1_800_000_000_500)
    }

    @Test func refusesWhatIsNotATime() {
        for text in [
            "", "2027-01-15", "2027-01-15T08:00:00", "2027-02-29T00:00:00Z", "2027-13-01T00:00:00Z", "2027-01-15T24:00:00Z",
            "2027-01-15T08:00:00.Z", "2027-01-15T08:00:00+1:00", "2027-01-15 08:00:00Z", "x027-01-15T08:00:00Z", "2027-01-15T08:00:00Zjunk"
        ] {
            #expect(Timestamp.milliseconds(parsing: text) == nil, "\(text)")
        }
    }
}
