import Foundation
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The change log's files: records read back as written, in order across generations, and
/// reading stops at the first record a crash cut short or garbled.
@Suite struct ChangeLogTests {
    static func record(_ seq: Int64, snapshot size: Int = 40) -> ChangeLog.Record {
        ChangeLog.Record(
            seq: seq, sessionID: "s\(seq % 3)", version: seq + 1, touchedAt: 1_700_000_000_000 + seq,
            firstEvent: seq * 10, lastEvent: seq * 10 + 4,
            snapshot: Array(String(repeating: "{\"v\":\(seq)}", count: max(1, size / 8)).utf8),
            events: Array("[{\"seq\":\(seq)}]".utf8)
        )
    }

    @Test func recordsComeBackInOrderAcrossGenerations() throws {
        let folder = try TemporaryFolder()
        let prefix = "\(folder.path)/navd.db"
        let log = try ChangeLog(prefix: prefix, after: 0, synchronous: false)
        for seq in 1...5 { try log.append(Self.record(Int64(seq), snapshot: seq * 300)) }
        #expect(try log.rotate() == 1)
        for seq in 6...8 { try log.append(Self.record(Int64(seq))) }
        let (records, last) = try ChangeLog.read(prefix: prefix)
        #expect(records == (1...8).map { Self.record(Int64($0), snapshot: $0 <= 5 ? $0 * 300 : 40) })
        #expect(last == 2)
        // A generation's file goes once the database holds it; the current one stays.
        log.remove(through: 2)
        #expect(ChangeLog.files(prefix: prefix).map(\.0) == [2])
        #expect(try ChangeLog.read(prefix: prefix).records.map(\.seq) == [6, 7, 8])
    }

    /// A change made with an `Idempotency-Key` carries its answer in the same record, and reads
    /// back with it; the records without one around it read back as before.
    @Test func aRecordKeepsItsAnswerAndRecordsWithoutOneAreUnchanged() throws {
        let folder = try TemporaryFolder()
        let prefix = "\(folder.path)/navd.db"
        let log = try ChangeLog(prefix: prefix, after: 0, synchronous: false)
        var keyed = Self.record(2)
        keyed.answer = KeptAnswer(
            key: "s2 0123abcd", session: "s2", fingerprint: Array(0..<32), status: 200,
            headers: [("ETag", "\"3\""), ("Content-Type", "application/json")], body: Array(#"{"version":3}"#.utf8),
            createdAt: 1_700_000_000_123)
        for record in [Self.record(1), keyed, Self.record(3)] { try log.append(record) }
        let records = try ChangeLog.read(prefix: prefix).records
        #expect(records == [Self.record(1), keyed, Self.record(3)])
        #expect(records[1].answer?.headers.map(\.0) == ["ETag", "Content-Type"])
        // The answer is inside the checksum: a record cut within it is a crash's tail, as any other.
        var single: [UInt8] = []
        ChangeLog.encode(keyed, into: &single)
        var plain: [UInt8] = []
        ChangeLog.encode(Self.record(2), into: &plain)
        #expect(single.count > plain.count)
        #expect(ChangeLog.decode(Array(single.dropLast()), at: 0) == nil)
    }

    /// A change's feed record rides in its change log record, after the answer when there is one,
    /// and reads back with its position; the records around it, without one, read as before.
    @Test func aRecordKeepsItsFeedRecordWithOrWithoutAnAnswer() throws {
        let folder = try TemporaryFolder()
        let prefix = "\(folder.path)/navd.db"
        let log = try ChangeLog(prefix: prefix, after: 0, synchronous: false)
        func feed(_ seq: Int64, position: Int64) -> LoggedFeedRecord {
            LoggedFeedRecord(
                position: position,
                record: FeedRecord(
                    session: "s\(seq % 3)", version: Int(seq + 1), isEnd: false, graph: "news", time: 1_700_000_000_000 + seq,
                    attributes: ["tenant": .string("t\(seq)")], full: Array(#""time":1,"full":true}"#.utf8),
                    analytics: Array(#""time":1}"#.utf8)))
        }
        var alone = Self.record(2)
        alone.feed = feed(2, position: 9)
        var keyed = Self.record(4)
        keyed.answer = KeptAnswer(
            key: "s1 k", session: "s1", fingerprint: Array(0..<32), status: 200, headers: [("ETag", "\"5\"")],
            body: Array(#"{"version":5}"#.utf8), createdAt: 1_700_000_000_004)
        keyed.feed = feed(4, position: 12)
        let written = [Self.record(1), alone, Self.record(3), keyed]
        for record in written { try log.append(record) }
        let records = try ChangeLog.read(prefix: prefix).records
        #expect(records == written)
        #expect(records[1].feed?.position == 9 && records[1].answer == nil)
        #expect(records[3].feed?.record.attributes == ["tenant": .string("t4")] && records[3].answer?.status == 200)
        // Inside the checksum: a record cut within its feed record is a crash's tail.
        var bytes: [UInt8] = []
        ChangeLog.encode(keyed, into: &bytes)
        #expect(ChangeLog.decode(Array(bytes.dropLast()), at: 0) == nil)
    }

    /// A record with an answer and a feed record, built here byte by byte from the format: the
    /// change's five Int64s and three fields; the answer's status and time, then its key,
    /// fingerprint, headers and body; the feed's tag (-1), position, version, end flag and time,
    /// then its graph, attributes, full form, analytics form (empty: the full form's) and view's
    /// scenes. Every integer is little-endian, every field its UInt32 length and its bytes.
    @Test func aRecordWithAnAnswerAndAFeedRecordIsTheseBytes() throws {
        var built = HandBuiltRecord()
        for value: Int64 in [7, 3, 1_700_000_000_007, 70, 74] { built.int(value) }
        built.field("s1")
        built.field(#"{"v":7}"#)
        built.field(#"[{"seq":7}]"#)
        built.int(201)
        built.int(1_700_000_000_007)
        built.field("s1 k")
        built.field(Array(0..<32))
        built.field(#"[["ETag","\"3\""]]"#)
        built.field(#"{"version":3}"#)
        for value: Int64 in [-1, 12, 3, 0, 1_700_000_000_007] { built.int(value) }
        built.field("news")
        built.field("{}")
        built.field(#""time":"x"}"#)
        built.field("")
        built.field("list_news")
        built.field("top")
        let bytes = built.bytes

        var record = ChangeLog.Record(
            seq: 7, sessionID: "s1", version: 3, touchedAt: 1_700_000_000_007, firstEvent: 70, lastEvent: 74,
            snapshot: Array(#"{"v":7}"#.utf8), events: Array(#"[{"seq":7}]"#.utf8))
        record.answer = KeptAnswer(
            key: "s1 k", session: "s1", fingerprint: Array(0..<32), status: 201, headers: [("ETag", "\"3\"")],
            body: Array(#"{"version":3}"#.utf8), createdAt: 1_700_000_000_007)
        let full = Array(#""time":"x"}"#.utf8)
        record.feed = LoggedFeedRecord(
            position: 12,
            record: FeedRecord(
                session: "s1", version: 3, isEnd: false, graph: "news", time: 1_700_000_000_007, attributes: [:], full: full,
                analytics: full, fromScene: "top", toScene: "list_news"))
        var encoded: [UInt8] = []
        ChangeLog.encode(record, into: &encoded)
        #expect(encoded == bytes)
        #expect(ChangeLog.decode(bytes, at: 0)?.0 == record)
    }

    /// A feed record keeps its view's scenes; one written before they were kept (no scene fields
    /// after its forms) reads its view from its `from` and `to` screens.
    @Test func aFeedRecordKeepsItsViewAndAnOlderOneReadsItFromItsScreens() throws {
        let full = Array(
            #""time":"x","from":{"path":"/top","screen":{"id":"e1","scene":"top","params":{}}},"to":{"path":"/top/list_news","screen":{"id":"e2","scene":"list_news","params":{}}}}"#
                .utf8)
        var record = Self.record(2)
        record.feed = LoggedFeedRecord(
            position: 3,
            record: FeedRecord(
                session: "s2", version: 3, isEnd: false, graph: "news", time: 1, attributes: [:], full: full, analytics: full,
                fromScene: "top", toScene: "list_news"))
        var bytes: [UInt8] = []
        ChangeLog.encode(record, into: &bytes)
        #expect(ChangeLog.decode(bytes, at: 0)?.0 == record)
        // The same record as an older navd wrote it: without the two scene fields at the end.
        let scenes = 4 + "list_news".utf8.count + 4 + "top".utf8.count
        var older = Array(bytes.dropLast(scenes))
        let length = UInt32(older.count - 12)
        withUnsafeBytes(of: length.littleEndian) { older.replaceSubrange(0..<4, with: $0) }
        let sum = older.withUnsafeBytes { ChangeLog.checksum(length: length, UnsafeRawBufferPointer(rebasing: $0[12...])) }
        withUnsafeBytes(of: sum.littleEndian) { older.replaceSubrange(4..<12, with: $0) }
        let read = try #require(ChangeLog.decode(older, at: 0)?.0.feed?.record)
        #expect(read.toScene == "list_news" && read.fromScene == "top")
    }

    /// A record as navd wrote it before answers were kept (schema version 5), built here byte by
    /// byte from the format: five little-endian Int64s, then the session id, snapshot and events,
    /// each after its UInt32 length. It reads back without an answer, and a change made without
    /// an `Idempotency-Key` is still written as exactly those bytes.
    @Test func aRecordWrittenBeforeAnswersWereKeptStillReads() throws {
        var built = HandBuiltRecord()
        for value: Int64 in [7, 3, 1_700_000_000_007, 70, 74] { built.int(value) }
        built.field("s1")
        built.field(#"{"v":7}"#)
        built.field(#"[{"seq":7}]"#)
        let bytes = built.bytes
        let expected = ChangeLog.Record(
            seq: 7, sessionID: "s1", version: 3, touchedAt: 1_700_000_000_007, firstEvent: 70, lastEvent: 74,
            snapshot: Array(#"{"v":7}"#.utf8), events: Array(#"[{"seq":7}]"#.utf8))
        let decoded = try #require(ChangeLog.decode(bytes, at: 0))
        #expect(decoded.0 == expected)
        #expect(decoded.0.answer == nil)
        #expect(decoded.1 == bytes.count)
        var encoded: [UInt8] = []
        ChangeLog.encode(expected, into: &encoded)
        #expect(encoded == bytes)
    }

    @Test func aRecordCutShortEndsTheFile() throws {
        let folder = try TemporaryFolder()
        let prefix = "\(folder.path)/navd.db"
        let log = try ChangeLog(prefix: prefix, after: 0, synchronous: false)
        for seq in 1...3 { try log.append(Self.record(Int64(seq))) }
        let path = log.path(of: log.generation)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let whole = bytes.count
        // Every cut inside the last record leaves the first two.
        var single: [UInt8] = []
        ChangeLog.encode(Self.record(3), into: &single)
        for cut in [1, 11, 12, single.count / 2, single.count - 1] {
            try Data(bytes.prefix(whole - cut)).write(to: URL(fileURLWithPath: path))
            #expect(try ChangeLog.read(prefix: prefix).records.map(\.seq) == [1, 2], "cut \(cut)")
        }
    }

    /// A flipped byte with whole records after it is damage, not a crash's tail: the scan says
    /// where it is and reads on past it (a crash can only cut the last record short).
    @Test func aFlippedByteBeforeWholeRecordsIsReportedWhereItIs() throws {
        let folder = try TemporaryFolder()
        let prefix = "\(folder.path)/navd.db"
        let log = try ChangeLog(prefix: prefix, after: 0, synchronous: false)
        for seq in 1...3 { try log.append(Self.record(Int64(seq), snapshot: 500)) }
        let path = log.path(of: log.generation)
        var bytes = try #require(FileManager.default.contents(atPath: path))
        var single: [UInt8] = []
        ChangeLog.encode(Self.record(1, snapshot: 500), into: &single)
        let middle = single.count  // records 1 and 2 have the same size
        bytes[middle + single.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
        let scan = try #require(try ChangeLog.scan(prefix: prefix).first)
        #expect(scan.records.map(\.seq) == [1, 3])
        #expect(scan.offsets == [0, 2 * single.count])
        #expect(scan.problems == [ChangeLog.Problem(offset: middle, length: single.count, followedByRecords: true)])
        // The same byte flipped in the last record is a tail like any other.
        var last = try #require(FileManager.default.contents(atPath: path))
        last[middle + single.count / 2] ^= 0x40
        last[2 * single.count + 30] ^= 0x40
        try last.write(to: URL(fileURLWithPath: path))
        let tail = try #require(try ChangeLog.scan(prefix: prefix).first)
        #expect(tail.records.map(\.seq) == [1, 2])
        #expect(tail.problems == [ChangeLog.Problem(offset: 2 * single.count, length: single.count, followedByRecords: false)])
    }

    @Test func garbageAfterTheLastRecordIsIgnored() throws {
        let folder = try TemporaryFolder()
        let prefix = "\(folder.path)/navd.db"
        let log = try ChangeLog(prefix: prefix, after: 4, synchronous: true)
        try log.append(Self.record(1))
        let path = log.path(of: 5)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data([0xFF, 0xFF, 0xFF, 0x7F] + [UInt8](repeating: 0xAB, count: 40)))
        try handle.close()
        #expect(try ChangeLog.read(prefix: prefix).records == [Self.record(1)])
        #expect(try ChangeLog.read(prefix: prefix).lastGeneration == 5)
    }
}

/// A change log record built by hand from the format, as a test states it: the payload's
/// integers (little-endian Int64s) and fields (a little-endian UInt32 length, then the bytes),
/// framed by its length and checksum.
struct HandBuiltRecord {
    private var payload: [UInt8] = []

    mutating func int(_ value: Int64) { withUnsafeBytes(of: value.littleEndian) { payload += $0 } }

    mutating func field(_ bytes: [UInt8]) {
        withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { payload += $0 }
        payload += bytes
    }

    mutating func field(_ text: String) { field(Array(text.utf8)) }

    /// `[length][checksum][payload]`.
    var bytes: [UInt8] {
        let length = UInt32(payload.count)
        var bytes: [UInt8] = []
        withUnsafeBytes(of: length.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: payload.withUnsafeBytes { ChangeLog.checksum(length: length, $0) }.littleEndian) { bytes += $0 }
        return bytes + payload
    }
}
