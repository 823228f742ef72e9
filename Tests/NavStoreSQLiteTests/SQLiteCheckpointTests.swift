import NavCore
import NavJSON
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// Checkpoints kept in the SQLite file (docs/design.md, "The session at a past version"): a
/// process started again on the file rebuilds a past version from the nearest one below it, not
/// from the session's creation; purges and the sweep take them with the records they stand before.
@Suite struct SQLiteCheckpointTests {
    typealias Fixture = SQLiteFeedTests.Fixture

    /// A session with `changes` changes after its creation, and the view each version answered.
    static func longSession(_ fixture: Fixture, changes: Int) throws -> (id: String, owner: Credentials, answers: [Int: [UInt8]]) {
        let created = try fixture.sessions.create(graph: nil, start: nil, context: ["tenant": "t1"])
        let owner = Credentials(bearer: Token.digest(created.token))
        var answers: [Int: [UInt8]] = [1: fixture.sessions.view(of: created.session)]
        for index in 0..<changes {
            fixture.tick()
            let path = index % 2 == 0 ? "^/top/list_news(category=\(index))" : "^/top/help"
            try fixture.sessions.apply(.intent(.navigate(path)), to: created.session.id, credentials: owner, ifMatch: nil) { mutation in
                answers[mutation.session.state.version] = fixture.sessions.view(of: mutation.session)
            }
        }
        return (created.session.id, owner, answers)
    }

    /// The versions of the checkpoints in the file, every session's, in order.
    static func checkpoints(_ path: String) throws -> [Int] {
        try SQLiteSchemaTests.rows("feed_checkpoints", at: path).compactMap { row in
            row.split(separator: "|").dropFirst().first.flatMap { Int($0) }
        }
        .sorted()
    }

    /// Checkpoints written fast (large snapshots, many changes) stay near their budget between
    /// sweeps: each eighth of it written, the oldest go while all take more than it.
    @Test func checkpointsWrittenBetweenSweepsStayNearTheirBytes() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let fixture = try Fixture(path: path, threshold: 1000)
        let budget = 64 << 10
        let snapshot = Array(repeating: UInt8(ascii: "x"), count: 10_000)
        for version in 1...100 {
            try fixture.store.keepCheckpoint(of: "s\(version % 7)", version: version * 64, snapshot: snapshot, within: budget)
        }
        let kept = try Self.checkpoints(path)
        #expect(kept.count * snapshot.count <= budget + budget / 8 + snapshot.count, "\(kept.count) checkpoints of 10 KB")
        #expect(kept.contains(100 * 64), "the newest is kept")
        fixture.store.close()
    }

    @Test func aProcessStartedAgainReplaysFromTheStoredCheckpoint() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let interval = SessionService.checkpointInterval
        let clock = Locked<Int64>(1_000_000)
        let session: (id: String, owner: Credentials, answers: [Int: [UInt8]])
        do {
            let fixture = try Fixture(path: path, threshold: 16, clock: clock)
            session = try Self.longSession(fixture, changes: 3 * interval + 9)
            fixture.sessions.checkpoints.flush()
            fixture.store.close()
        }
        #expect(try Self.checkpoints(path) == [interval, 2 * interval, 3 * interval])
        let reopened = try Fixture(path: path, threshold: 16, clock: clock)
        defer { reopened.store.close() }
        for version in [3 * interval + 8, 2 * interval + 1, interval + 30, 5] {
            let before = reopened.sessions.checkpoints.changesReplayed
            let past = try reopened.sessions.view(of: session.id, credentials: session.owner, at: version)
            let replayed = reopened.sessions.checkpoints.changesReplayed - before
            #expect(replayed <= interval, "version \(version): \(replayed) changes replayed")
            #expect(past.bytes == session.answers[version], "version \(version)")
        }
        #expect(reopened.sessions.checkpoints.unstored == 0)
    }

    @Test func purgesAndTheSweepTakeCheckpointsWithTheirRecords() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let interval = SessionService.checkpointInterval
        let fixture = try Fixture(path: path, threshold: 16)
        let purged = try Self.longSession(fixture, changes: interval + 1)
        let ended = try Self.longSession(fixture, changes: interval + 1)
        let swept = try Self.longSession(fixture, changes: 2 * interval + 1)
        fixture.sessions.checkpoints.flush()
        fixture.store.close()
        #expect(try Self.checkpoints(path).count == 4)

        let reopened = try Fixture(path: path, threshold: 16)
        // A purge forgets the session's snapshots with its records: they hold its context.
        #expect(try reopened.sessions.purgeFeed(.session(purged.id)) > 0)
        #expect(try SQLiteSchemaTests.rows("feed_checkpoints", at: path).allSatisfy { !$0.contains(purged.id) })
        // An ended session's are of no use: the next sweep takes them, even with its records kept.
        try reopened.delete(ended.id)
        #expect(try reopened.store.sweepFeed(olderThan: 0, maxBytes: .max) == 0)
        #expect(try SQLiteSchemaTests.rows("feed_checkpoints", at: path).allSatisfy { !$0.contains(ended.id) })
        // A checkpoint whose next record was swept can be no base: it goes; the later one stays.
        let firstRecords = try reopened.store.history(of: swept.id, after: 0, limit: interval + 2)
        let cutoff = try #require(firstRecords.last?.time)
        #expect(try reopened.store.sweepFeed(olderThan: cutoff, maxBytes: .max) > 0)
        #expect(try SQLiteSchemaTests.rows("feed_checkpoints", at: path).filter { $0.contains(swept.id) }.count == 1)
        #expect(
            try reopened.sessions.view(of: swept.id, credentials: swept.owner, at: 2 * interval + 1).bytes
                == swept.answers[2 * interval + 1])
        _ = try Self.longSession(reopened, changes: 2 * interval + 1)
        reopened.sessions.checkpoints.flush()
        reopened.store.close()

        // Their bytes stay within their budget, the newest kept first.
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let sizes = try connection.statement("SELECT length(snapshot) FROM feed_checkpoints ORDER BY rowid DESC")
        var newest: [Int] = []
        while try sizes.step() { newest.append(Int(sizes.int(0))) }
        sizes.reset()
        #expect(newest.count == 3)
        try SQLiteStore.sweepCheckpoints(maxBytes: newest[0] + newest[1], connection)
        #expect(try Self.checkpoints(path) == [interval, 2 * interval])
        try SQLiteStore.sweepCheckpoints(maxBytes: newest[0] + newest[1] - 1, connection)
        #expect(try Self.checkpoints(path) == [2 * interval])
    }
}
