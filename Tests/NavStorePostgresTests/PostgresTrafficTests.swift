import Foundation
import NavJSON
import Testing

@testable import NavSessions
@testable import NavStorePostgres
@testable import NavTestSupport

/// Traffic and funnels on PostgreSQL (docs/design.md, "Traffic and funnels"): the memory store's
/// answers, also after the migrations that add the view columns (filled from the records kept)
/// and then hold them in the one index by session.
@Suite(.needsPostgres) struct PostgresTrafficTests {
    @Test func theStoreAgreesWithTheMemoryStoreAlsoAfterTheMigration() throws {
        let database = try PostgresFeedTests.Database()
        let store = try database.store()
        let clock = Locked<Int64>(0)
        try TrafficJourneys.write(try TrafficJourneys.service(store, clock: clock), store, clock: clock)
        let memory = MemoryStore()
        let memoryClock = Locked<Int64>(0)
        try TrafficJourneys.write(try TrafficJourneys.service(memory, clock: memoryClock), memory, clock: memoryClock)
        try TrafficJourneys.check(store, against: memory)

        // The database as the migrations before left it, with the same records: a process starting
        // migrates it, and the records' views are filled from their screens.
        let connection = try database.connection()
        defer { connection.close() }
        try connection.executeScript(
            """
            DROP TABLE feed_checkpoints;
            DROP INDEX feed_session;
            ALTER TABLE feed DROP COLUMN to_scene, DROP COLUMN from_scene;
            CREATE INDEX feed_session ON feed (session_id, version);
            DELETE FROM migrations WHERE version >= \(PostgresStore.migrations.count - 2);
            """)
        let migrated = try database.store()
        try TrafficJourneys.check(migrated, against: memory)
        let views = try connection.execute("SELECT count(*) FROM feed WHERE to_scene IS NOT NULL")
        #expect(views.int(0, 0) == 11)
    }
}
