import Foundation
import NavJSON
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// Traffic and funnels on the SQLite store (docs/design.md, "Traffic and funnels"): the same
/// answers as the memory store's, from records in the table, in the change log not folded yet,
/// after a reopen, and from a file of schema version 7 upgraded in place.
@Suite struct SQLiteTrafficTests {
    /// The memory store with the journeys written, for reference.
    static func reference() throws -> MemoryStore {
        let memory = MemoryStore()
        let clock = Locked<Int64>(0)
        try TrafficJourneys.write(try TrafficJourneys.service(memory, clock: clock), memory, clock: clock)
        return memory
    }

    /// With a threshold of 3 the log is folded in every few changes; with 10,000 every record is
    /// still in the log when asked, and in the table after the reopen.
    @Test(arguments: [3, 10_000]) func theStoreAgreesWithTheMemoryStore(threshold: Int) throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let clock = Locked<Int64>(0)
        let fixture = try SQLiteStoreTests.Fixture(path: path, threshold: threshold, now: { clock.withLock { $0 } })
        let memory = try Self.reference()
        try TrafficJourneys.write(fixture.sessions, fixture.store, clock: clock)
        try TrafficJourneys.check(fixture.store, against: memory)
        fixture.store.close()
        let reopened = try SQLiteStoreTests.Fixture(path: path, threshold: threshold, now: { clock.withLock { $0 } })
        defer { reopened.store.close() }
        try TrafficJourneys.check(reopened.store, against: memory)
    }

    /// A file of schema version 7 with feed records gets the view columns, filled from the records
    /// kept exactly as navd 8 writes them, and the index; nothing else changes; traffic and funnels
    /// then answer as on a new file.
    @Test func aDatabaseOfVersionSevenGetsTheViewColumnsFilledFromItsRecords() throws {
        let folder = try TemporaryFolder()
        let written = "\(folder.path)/written.db"
        let clock = Locked<Int64>(0)
        let fixture = try SQLiteStoreTests.Fixture(path: written, threshold: 10_000, now: { clock.withLock { $0 } })
        try TrafficJourneys.write(fixture.sessions, fixture.store, clock: clock)
        fixture.store.close()

        let path = "\(folder.path)/navd.db"
        try SQLiteSchemaTests.makeOldDatabase(at: path, through: 4)
        try SQLiteSchemaTests.execute(
            "BEGIN; \(SQLiteStore.idempotencyTables); \(SQLiteStore.feedTables); INSERT INTO migrations VALUES (5, 0), (6, 0), (7, 0); COMMIT",
            at: path)
        let columns = "position, session_id, version, is_end, graph, time, attributes, full, analytics, cost"
        try SQLiteSchemaTests.run(
            "INSERT INTO feed (\(columns)) SELECT \(columns) FROM other.feed", on: path, attaching: written)
        #expect(
            try SQLiteStore.inspect(path: path).lines.contains {
                $0.hasPrefix("  schema: version 7 (navd upgrades it to 11 when it next starts: it adds the feed's view columns")
            })
        let before = try SQLiteSchemaTests.objects(at: path)
        let upgraded = try SQLiteStoreTests.Fixture(path: path, threshold: 10_000, now: { clock.withLock { $0 } })
        try TrafficJourneys.check(upgraded.store, against: try Self.reference())
        upgraded.store.close()
        #expect(
            try SQLiteSchemaTests.objects(at: path)
                == (before.filter { $0 != "index feed_session" } + ["index feed_blocks", "table feed_checkpoints"]).sorted {
                    $0.split(separator: " ")[1] < $1.split(separator: " ")[1]
                })
        #expect(
            try SQLiteSchemaTests.migrations(at: path).map { $0.split(separator: "|").first } == [
                "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"
            ])
        // Row for row as navd 8 wrote them: the records' columns, and their views.
        #expect(try SQLiteSchemaTests.rows("feed", at: path) == SQLiteSchemaTests.rows("feed", at: written))
        #expect(try SQLiteSchemaTests.rows("feed", at: path).count == 13)
        #expect(try SQLiteStore.inspect(path: path).lines.contains("  schema: version 11"))
    }
}
