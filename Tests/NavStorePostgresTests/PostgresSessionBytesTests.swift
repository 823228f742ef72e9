import Testing

@testable import NavSessions
@testable import NavStorePostgres
@testable import NavTestSupport

/// On PostgreSQL a session's retained events count in `session_bytes` with its snapshot
/// (docs/design.md, "Sessions' bytes"): what a change trims from the log, what a full budget
/// drops and what a delete removes are given back at once, not only when the sweep counts the
/// tables again.
@Suite(.needsPostgres) struct PostgresSessionBytesTests {
    @Test func trimmedAndDeletedEventsAreGivenBackAtOnce() throws {
        let database = try PostgresFeedTests.Database()
        let store = try database.store(retainedEvents: 20)
        let service = SessionService(store: store, graphs: database.graphs, configuration: .init(), now: Clock.milliseconds)
        let created = try service.create(graph: nil, start: nil, context: [:])
        let credentials = Credentials(bearer: Token.digest(created.token))
        let id = created.session.id
        // Some 400 events: the log is trimmed to the newest 20 (and up to 64 more) six times.
        for index in 0..<50 {
            let path = index % 2 == 0 ? NewsPaths.pathA : NewsPaths.pathB
            try service.apply(.intent(.navigate(path)), to: id, credentials: credentials, ifMatch: nil) { _ in }
        }
        let stored = try store.storedSessionBytes()
        service.releaseEventBytes()
        #expect(service.sessionBytes.used == stored)
        let connection = try database.connection()
        defer { connection.close() }
        #expect(try connection.execute("SELECT max(last_seq) - min(first_seq) FROM event_log WHERE session_id = $1", [id]).int(0, 0) < 100)
        // Dropped to make room in a full budget: given back, to the byte.
        try store.dropRetainedEvents(of: id)
        service.releaseEventBytes()
        #expect(try connection.execute("SELECT count(*) FROM event_log WHERE session_id = $1", [id]).int(0, 0) == 0)
        #expect(service.sessionBytes.used == (try store.storedSessionBytes()))
        try service.delete(id, credentials: credentials, ifMatch: nil)
        #expect(service.sessionBytes.used == 0)
        #expect(try store.storedSessionBytes() == 0)
    }
}
