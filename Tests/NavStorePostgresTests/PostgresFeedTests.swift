import Foundation
import NavCore
import NavJSON
import NavWire
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStorePostgres
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The PostgreSQL store's feed: every applied change has its record, written in the change's own
/// transaction, and readers paging with `next` see each record once, in each session's version
/// order, however the transactions of several processes commit.
@Suite(.needsPostgres) struct PostgresFeedTests {
    final class Database: @unchecked Sendable {
        let cluster: PostgresCluster
        let graphs: GraphRegistry
        let navigator: Navigator
        private let opened = Locked<[PostgresStore]>([])

        init() throws {
            cluster = try PostgresCluster()
            graphs = try TestFixtures.graphs()
            navigator = try #require(try graphs.latest("news")).navigator
        }

        deinit {
            for store in opened.withLock({ $0 }) { store.close() }
            cluster.stop()
        }

        /// A store on the database: each stands for a navd process.
        func store(connections: Int = 2, retainedEvents: Int = 1000) throws -> PostgresStore {
            let store = try PostgresStore(
                url: cluster.url, connections: connections, retainedEvents: retainedEvents, decode: StoreFactory.snapshotDecoder(graphs))
            opened.withLock { $0.append(store) }
            return store
        }

        /// A new session at version 1, touched at `time`.
        func session(touchedAt time: Int64 = 1) throws -> (StoredSession, [LifecycleEvent]) {
            var (session, events) = try TestFixtures.session(SessionService.newID(), in: graphs)
            session.touchedAt = time
            return (session, events)
        }

        /// `session` one navigation on (version + 1).
        func changed(_ session: StoredSession) throws -> (StoredSession, [LifecycleEvent]) {
            var next = session
            let path = session.state.version % 2 == 1 ? NewsPaths.pathA : NewsPaths.pathB
            let outcome = try navigator.apply(.navigate(path), to: session.state)
            next.state = outcome.state
            try #require(next.state.version == session.state.version + 1)
            return (next, outcome.events)
        }

        /// A connection of its own, for transactions the test holds open.
        func connection() throws -> PostgresConnection {
            try PostgresConnection(conninfo: cluster.url)
        }
    }

    /// A record with distinct forms: the full form carries a value the analytics form leaves out.
    static func record(
        _ id: String, _ version: Int, end: Bool = false, time: Int64 = 1_000, attributes: [String: JSONValue] = [:]
    ) -> FeedRecord {
        let head = "\"time\":\(time),\"session\":\"\(id)\",\"version\":\(version)"
        return FeedRecord(
            session: id, version: version, isEnd: end, graph: "news", time: time, attributes: attributes,
            full: Array((head + ",\"secret\":\"kept\"}").utf8), analytics: Array((head + "}").utf8))
    }

    /// Every record from the oldest, paged with `next`, `limit` at a time.
    static func readAll(_ store: PostgresStore, limit: Int = 1000, form: FeedForm = .full) throws -> [FeedEntry] {
        var entries: [FeedEntry] = []
        var start = FeedStart.oldest
        while true {
            let page = try store.feed(from: start, limit: limit, form: form)
            entries += page.entries
            if page.entries.isEmpty { return entries }
            start = .after(page.next)
        }
    }

    /// A session's creation, its changes, its delete and its expiry each have their record, in
    /// both forms; a change whose compare-and-set lost, and a delete of nothing, have none.
    @Test func everyAppliedChangeHasItsRecordAndNoOtherDoes() throws {
        let database = try Database()
        let store = try database.store()
        let (first, firstEvents) = try database.session()
        #expect(try store.insert(first, events: firstEvents, keeping: nil, record: Self.record(first.id, 1, time: 10)))
        let (second, secondEvents) = try database.changed(first)
        #expect(
            try store.update(
                second, expectedVersion: 1, events: secondEvents, eventsJSON: secondEvents.jsonBytes, keeping: nil,
                record: Self.record(first.id, 2, time: 20)))
        // From version 1 again: another writer got there first.
        let (stale, staleEvents) = try database.changed(first)
        #expect(
            try !store.update(
                stale, expectedVersion: 1, events: staleEvents, eventsJSON: staleEvents.jsonBytes, keeping: nil,
                record: Self.record(first.id, 99, time: 25)))
        #expect(try store.delete(first.id, record: Self.record(first.id, 3, end: true, time: 30)))
        #expect(try !store.delete(first.id, record: Self.record(first.id, 98, end: true, time: 31)))

        let (idle, idleEvents) = try database.session(touchedAt: 5)
        #expect(try store.insert(idle, events: idleEvents, keeping: nil, record: Self.record(idle.id, 1, time: 5)))
        let ended = Locked<[StoredSession]>([])
        let expired = try store.deleteExpired(touchedBefore: 6) { session in
            ended.withLock { $0.append(session) }
            return Self.record(session.id, session.state.version + 1, end: true, time: 40)
        }
        #expect(expired.map(\.id) == [idle.id])
        // The end record is made of the session as it was deleted.
        #expect(ended.withLock { $0.map(\.id) } == [idle.id])
        #expect(ended.withLock { $0.first?.state.version } == idle.state.version)
        #expect(ended.withLock { $0.first?.state.pathText } == idle.state.pathText)

        let ids = [first.id + ":1", first.id + ":2", first.id + ":end", idle.id + ":1", idle.id + ":end"]
        let full = try Self.readAll(store, form: .full)
        #expect(full.map(\.id) == ids)
        #expect(full.map(\.time) == [10, 20, 30, 5, 40])
        #expect(full.allSatisfy { $0.form == .full && String(decoding: $0.members, as: UTF8.self).contains("\"secret\":\"kept\"") })
        let analytics = try Self.readAll(store, form: .analytics)
        #expect(analytics.map(\.id) == ids)
        #expect(analytics.map(\.cursor) == full.map(\.cursor))
        #expect(analytics.allSatisfy { !String(decoding: $0.members, as: UTF8.self).contains("secret") })
        // Each is a whole JSON object, its cursor as the reader passes it back.
        for entry in full {
            let object = try #require(try JSONValue(parsing: entry.json).objectValue)
            #expect(object["cursor"] == .string(entry.cursor.description))
            #expect(FeedCursor(entry.cursor.description) == entry.cursor)
        }

        #expect(try store.history(of: first.id, after: 0, limit: 10).map(\.id) == [first.id + ":1", first.id + ":2", first.id + ":end"])
        #expect(try store.history(of: first.id, after: 1, limit: 1).map(\.id) == [first.id + ":2"])
        #expect(try store.history(of: first.id, after: 0, limit: 10).allSatisfy { $0.form == .full })
        #expect(try store.history(of: "nobody", after: 0, limit: 10).isEmpty)
    }

    /// As navd runs it: a session created through one process, changed through another and
    /// deleted through the first has its three records, the context's values in the full form
    /// only, and a purge by its configured attribute removes them.
    @Test func theServiceWritesItsRecordsThroughEitherProcess() throws {
        let database = try Database()
        var configuration = SessionService.Configuration()
        configuration.feed = FeedSettings(attributes: ["tenant"])
        let services = try (0..<2).map { _ in
            SessionService(store: try database.store(), graphs: database.graphs, configuration: configuration, now: Clock.milliseconds)
        }
        let created = try services[0].create(graph: nil, start: nil, context: ["tenant": .string("t1"), "user": .string("secret-user")])
        let credentials = Credentials(bearer: Token.digest(created.token))
        let id = created.session.id
        _ = try services[1].apply(.intent(.navigate(NewsPaths.pathA)), to: id, credentials: credentials, ifMatch: nil) { $0 }
        try services[0].delete(id, credentials: credentials, ifMatch: nil)

        let analytics = try services[1].feed(from: .oldest, limit: 10, form: .analytics)
        #expect(analytics.entries.map(\.id) == [id + ":1", id + ":2", id + ":end"])
        #expect(analytics.entries.allSatisfy { !String(decoding: $0.members, as: UTF8.self).contains("secret-user") })
        let full = try services[0].feed(from: .oldest, limit: 10, form: .full)
        #expect(full.entries.first.map { String(decoding: $0.members, as: UTF8.self).contains("secret-user") } == true)
        #expect(try services[0].purgeFeed(.attribute("tenant", .string("t1"))) == 3)
        #expect(try services[1].feed(from: .after(full.next), limit: 10, form: .full).entries.isEmpty)
        #expect(try services[1].feed(from: .oldest, limit: 10, form: .full).entries.isEmpty)
    }

    /// The admin listing reads a page of sessions at a time, oldest first: every session once,
    /// those made in the same millisecond too, however many pages it takes.
    @Test func aListingReadsPagesOfSessionsOldestFirst() throws {
        let database = try Database()
        let store = try database.store()
        var made: [(Int64, String)] = []
        for index in 0..<(2 * PostgresStore.listPage + 7) {
            var (session, events) = try database.session()
            session.createdAt = 1_000 + Int64(index / 3)  // three to a millisecond
            try store.insert(session, events: events)
            made.append((session.createdAt, session.id))
        }
        made.sort { $0 < $1 }
        var listed: [String] = []
        try store.list(limit: made.count - 2) { listed.append($0.id) }
        #expect(listed == made.prefix(made.count - 2).map(\.1))
        #expect(try store.list(limit: 1000).map(\.id) == made.map(\.1))
    }

    /// The `session_bytes` budget of each process counts its own changes as they are made, and
    /// what every process's sessions take at each sweep (docs/design.md, "Sessions' bytes").
    @Test func eachProcessCountsEverySessionsBytesAtTheSweep() throws {
        let database = try Database()
        let services = try (0..<2).map { _ in
            SessionService(store: try database.store(), graphs: database.graphs, configuration: .init(), now: Clock.milliseconds)
        }
        let mine = try services[0].create(graph: nil, start: nil, context: [:])
        let theirs = try services[1].create(graph: nil, start: nil, context: ["user": .string("u1")])
        // A session counts its snapshot and its retained events (its creation's, as JSON).
        let mineBytes = mine.session.snapshotBytes.count + mine.events.jsonBytes.count
        let theirBytes = theirs.session.snapshotBytes.count + theirs.events.jsonBytes.count
        #expect(services[0].sessionBytes.used == mineBytes)
        #expect(services[1].sessionBytes.used == theirBytes)
        // What a store reads is what was counted when it was written.
        #expect(try services[0].store.load(theirs.session.id)?.storedBytes == theirs.session.snapshotBytes.count)
        _ = try services[0].sweep()
        #expect(services[0].sessionBytes.used == mineBytes + theirBytes)
        try services[1].delete(theirs.session.id, credentials: Credentials(bearer: Token.digest(theirs.token)), ifMatch: nil)
        #expect(services[1].sessionBytes.used == 0)
        _ = try services[0].sweep()
        #expect(services[0].sessionBytes.used == mineBytes)
    }

    /// A checkpoint one process keeps is a base for the other (docs/design.md, "The session at a
    /// past version"): it rebuilds a past version replaying at most one interval of changes, not
    /// the session's whole history; a purge by attribute forgets the snapshots with the records.
    @Test func aCheckpointOneProcessKeepsIsTheOthersBase() throws {
        let database = try Database()
        var configuration = SessionService.Configuration()
        configuration.feed = FeedSettings(attributes: ["tenant"])
        let services = try (0..<2).map { _ in
            SessionService(store: try database.store(), graphs: database.graphs, configuration: configuration, now: Clock.milliseconds)
        }
        let created = try services[0].create(graph: nil, start: nil, context: ["tenant": .string("t1")])
        let credentials = Credentials(bearer: Token.digest(created.token))
        let id = created.session.id
        let interval = SessionService.checkpointInterval
        var answers: [Int: [UInt8]] = [:]
        for index in 0..<(2 * interval + 5) {
            let path = index % 2 == 0 ? NewsPaths.pathA : NewsPaths.pathB
            try services[0].apply(.intent(.navigate(path)), to: id, credentials: credentials, ifMatch: nil) { mutation in
                answers[mutation.session.state.version] = services[0].view(of: mutation.session)
            }
        }
        services[0].checkpoints.flush()
        let connection = try database.connection()
        defer { connection.close() }
        #expect(try connection.execute("SELECT count(*) FROM feed_checkpoints WHERE session_id = $1", [id]).int(0, 0) == 2)
        for version in [2 * interval + 3, interval + 2] {
            let before = services[1].checkpoints.changesReplayed
            #expect(try services[1].view(of: id, credentials: credentials, at: version).bytes == answers[version])
            #expect(services[1].checkpoints.changesReplayed - before <= interval)
        }
        #expect(try services[1].purgeFeed(.attribute("tenant", .string("t1"))) > 0)
        #expect(try connection.execute("SELECT count(*) FROM feed_checkpoints").int(0, 0) == 0)
    }

    /// Checkpoints written fast stay near their budget between sweeps: each eighth of it a
    /// process writes, the oldest go while all take more than it.
    @Test func checkpointsWrittenBetweenSweepsStayNearTheirBytes() throws {
        let database = try Database()
        let store = try database.store()
        let budget = 64 << 10
        let snapshot = Array(repeating: UInt8(ascii: "x"), count: 10_000)
        for version in 1...100 {
            try store.keepCheckpoint(of: "s\(version % 7)", version: version * 64, snapshot: snapshot, within: budget)
        }
        let connection = try database.connection()
        defer { connection.close() }
        let bytes = try connection.execute("SELECT COALESCE(sum(octet_length(snapshot)), 0) FROM feed_checkpoints").int(0, 0)
        #expect(Int(bytes) <= budget + budget / 8 + snapshot.count, "\(bytes) bytes of checkpoints")
        #expect(try connection.execute("SELECT count(*) FROM feed_checkpoints WHERE version = 6400").int(0, 0) == 1)
    }

    /// Only cursors the feed handed out are given, by whichever process: a record's, an empty
    /// page's `next`, one whose record was purged; not one of a transaction still running (its
    /// record is not handed out yet), nor one above the horizon or the sequence, nor one without
    /// a transaction (the other stores' form). The service refuses the others with 400.
    @Test func onlyCursorsHandedOutAreGivenByEitherProcess() throws {
        let database = try Database()
        var configuration = SessionService.Configuration()
        configuration.feed = FeedSettings(attributes: [])
        let stores = try (0..<2).map { _ in try database.store() }
        let services = stores.map {
            SessionService(store: $0, graphs: database.graphs, configuration: configuration, now: Clock.milliseconds)
        }
        let empty = try services[0].feed(from: .oldest, limit: 10, form: .full).next
        #expect(try stores[1].feedGave(empty) && stores[1].feedGave(.start))
        let created = try services[0].create(graph: nil, start: nil, context: [:])
        _ = try services[1].apply(
            .intent(.navigate(NewsPaths.pathA)), to: created.session.id, credentials: Credentials(bearer: Token.digest(created.token)),
            ifMatch: nil
        ) { $0 }
        let page = try services[1].feed(from: .oldest, limit: 10, form: .full)
        #expect(page.entries.count == 2)
        let newest = page.next
        #expect(try stores[0].feedGave(newest) && stores[1].feedGave(newest))
        #expect(try stores[0].feedGave(try services[0].feed(from: .after(newest), limit: 10, form: .full).next))

        // A record of a transaction still open: not handed out, not given.
        let open = try database.connection()
        defer { open.close() }
        try open.execute("BEGIN")
        let pending = try open.execute(
            """
            INSERT INTO feed (session_id, version, is_end, graph, time, attributes, full_form, analytics, cost)
            VALUES ('early', 1, false, 'news', 1, '{}', '"time":1}', '"time":1}', 100) RETURNING transaction_id::text, position
            """)
        let inFlight = FeedCursor(transaction: UInt64(pending.text(0, 0)) ?? 0, position: pending.int(0, 1))
        #expect(try !stores[0].feedGave(inFlight))
        let unknown = [
            inFlight, FeedCursor(transaction: inFlight.transaction + 1000, position: 0),
            FeedCursor(transaction: newest.transaction, position: inFlight.position + 1_000_000), FeedCursor(position: 5),
            FeedCursor(position: newest.position)
        ]
        for cursor in unknown {
            do {
                _ = try services[1].feed(from: .after(cursor), limit: 10, form: .full)
                Issue.record("cursor \(cursor) was answered")
            } catch {
                #expect(error.code == .invalidRequest && error.param == "after", "\(cursor)")
            }
        }
        try open.execute("COMMIT")
        let after = try services[0].feed(from: .after(newest), limit: 10, form: .full)
        #expect(after.entries.map(\.id) == ["early:1"])
        #expect(try stores[1].feedGave(after.next))
        #expect(try services[0].purgeFeed(.session(created.session.id)) == 2)
        #expect(try stores[1].feedGave(newest))
    }

    /// Pages read on from each other's `next` hold every record once; a page with nothing new
    /// gives back its `after`, and a read from the oldest of an empty feed a cursor from which the
    /// next record is found. `since` starts at the first record at or after the time.
    @Test func pagesReadOnWithNextHoldEveryRecordOnce() throws {
        let database = try Database()
        let store = try database.store()
        let empty = try store.feed(from: .oldest, limit: 10, form: .full)
        #expect(empty.entries.isEmpty)

        var written: [String] = []
        for step in 0..<5 {
            var (session, events) = try database.session()
            #expect(try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1, time: Int64(step * 100))))
            written.append(session.id + ":1")
            for version in 2...4 {
                let expected = session.state.version
                (session, events) = try database.changed(session)
                #expect(
                    try store.update(
                        session, expectedVersion: expected, events: events, eventsJSON: events.jsonBytes, keeping: nil,
                        record: Self.record(session.id, version, time: Int64(step * 100 + version))))
                written.append(session.id + ":\(version)")
            }
        }
        let first = try store.feed(from: .after(empty.next), limit: 100, form: .full)
        #expect(first.entries.map(\.id) == written)

        var paged: [FeedEntry] = []
        var start = FeedStart.oldest
        while true {
            let page = try store.feed(from: start, limit: 3, form: .analytics)
            #expect(page.entries.count <= 3)
            if page.entries.isEmpty {
                if case .after(let after) = start { #expect(page.next == after) }
                break
            }
            #expect(page.next == page.entries.last?.cursor)
            paged += page.entries
            start = .after(page.next)
        }
        #expect(paged.map(\.id) == written)
        #expect(paged.map(\.cursor) == paged.map(\.cursor).sorted())

        let since = try store.feed(from: .since(300), limit: 100, form: .full)
        #expect(since.entries.map(\.id) == Array(written.suffix(8)))
        let late = try store.feed(from: .since(10_000), limit: 100, form: .full)
        #expect(late.entries.isEmpty)
        // From a time among the records after a cursor.
        let sinceAfter = try store.feed(from: .since(300, after: since.entries[2].cursor), limit: 100, form: .full)
        #expect(sinceAfter.entries.map(\.id) == Array(written.suffix(5)))
        let lateAfter = try store.feed(from: .since(10_000, after: since.entries[0].cursor), limit: 100, form: .full)
        #expect(try lateAfter.entries.isEmpty && lateAfter.next > #require(since.entries.last?.cursor))
        let (session, events) = try database.session()
        #expect(try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1, time: 20_000)))
        #expect(try store.feed(from: .after(late.next), limit: 100, form: .full).entries.map(\.id) == [session.id + ":1"])
        #expect(
            try store.feed(from: .since(15_000, after: lateAfter.next), limit: 100, form: .full).entries.map(\.id) == [session.id + ":1"])
    }

    /// A record whose transaction is still open is not handed out, nor any written after it: a
    /// reader would page past it and never see it. Once it commits, both come, each once.
    @Test func recordsWaitForTransactionsStillOpenBelowThem() throws {
        let database = try Database()
        let store = try database.store()
        let open = try database.connection()
        defer { open.close() }
        try open.execute("BEGIN")
        try open.execute(
            """
            INSERT INTO feed (session_id, version, is_end, graph, time, attributes, full_form, analytics, cost)
            VALUES ('early', 1, false, 'news', 1, '{}', '"time":1}', '"time":1}', 100)
            """)
        let (session, events) = try database.session()
        #expect(try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1)))

        let waiting = try store.feed(from: .oldest, limit: 10, form: .full)
        #expect(waiting.entries.isEmpty)
        let stillWaiting = try store.feed(from: .after(waiting.next), limit: 10, form: .full)
        #expect(stillWaiting.entries.isEmpty)

        try open.execute("COMMIT")
        let page = try store.feed(from: .after(stillWaiting.next), limit: 10, form: .full)
        #expect(page.entries.map(\.id) == ["early:1", session.id + ":1"])
        #expect(try store.feed(from: .after(page.next), limit: 10, form: .full).entries.isEmpty)
    }

    /// A delete that waited for a change of its session writes its end record after that
    /// change's: here the change (its own record in its transaction) slips in while the delete
    /// waits for a lock that does not hold the change up.
    @Test func anEndRecordComesAfterTheChangeItsDeleteWaitedFor() throws {
        let database = try Database()
        let store = try database.store()
        let (session, events) = try database.session()
        #expect(try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1)))

        // Holds the row so that a delete waits, but not an update of its other columns.
        let holder = try database.connection()
        defer { holder.close() }
        try holder.execute("BEGIN")
        try holder.execute("SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE", [session.id])
        let id = session.id
        let deleting = OnThread { try store.delete(id, record: Self.record(id, 3, end: true)) }
        let watcher = try database.connection()
        defer { watcher.close() }
        var waited = false
        for _ in 0..<200 where !waited {
            waited = try watcher.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").int(0, 0) > 0
            if !waited { usleep(20_000) }
        }
        #expect(waited, "the delete never waited")

        let change = try database.connection()
        defer { change.close() }
        try change.execute("BEGIN")
        try change.execute("UPDATE sessions SET version = 2 WHERE id = $1", [session.id])
        try change.execute(
            """
            INSERT INTO feed (session_id, version, is_end, graph, time, attributes, full_form, analytics, cost)
            VALUES ($1, 2, false, 'news', 1, '{}', '"time":1}', '"time":1}', 100)
            """, [session.id])
        try change.execute("COMMIT")
        try holder.execute("COMMIT")

        #expect(try deleting.value())
        #expect(try Self.readAll(store).map(\.id) == [id + ":1", id + ":2", id + ":end"])
    }

    /// Two stores on one database (two processes) write the versions of many sessions, each
    /// session's changes going through both, while a reader pages the feed: every version of
    /// every session comes exactly once, and each session's in version order.
    @Test func aReaderSeesEveryVersionOnceWhileTwoProcessesWrite() throws {
        let database = try Database()
        let stores = [try database.store(connections: 3), try database.store(connections: 3)]
        let reader = try database.store(connections: 1)
        let versions = 12
        let done = Locked(false)
        let seen = Locked<[FeedEntry]>([])
        let reading = OnThread { () throws -> Int in
            var start = FeedStart.oldest
            var pages = 0
            while true {
                let finished = done.withLock { $0 }
                let page = try reader.feed(from: start, limit: 7, form: .full)
                seen.withLock { $0 += page.entries }
                start = .after(page.next)
                pages += 1
                if page.entries.isEmpty {
                    if finished { return pages }
                    usleep(1_000)
                }
            }
        }
        let writers = (0..<4).map { writer in
            OnThread { () throws -> [String] in
                var sessions: [StoredSession] = []
                for _ in 0..<3 {
                    let (session, events) = try database.session()
                    let store = stores[writer % 2]
                    guard try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1)) else {
                        throw StoreError(message: "not inserted")
                    }
                    sessions.append(session)
                }
                for version in 2...versions {
                    for index in sessions.indices {
                        let expected = sessions[index].state.version
                        let (next, events) = try database.changed(sessions[index])
                        let store = stores[(writer + version + index) % 2]
                        guard
                            try store.update(
                                next, expectedVersion: expected, events: events, eventsJSON: events.jsonBytes, keeping: nil,
                                record: Self.record(next.id, version))
                        else { throw StoreError(message: "lost a race nobody ran") }
                        sessions[index] = next
                    }
                }
                return sessions.map(\.id)
            }
        }
        let ids = try writers.flatMap { try $0.value() }
        done.withLock { $0 = true }
        #expect(try reading.value() > 1)

        let entries = seen.withLock { $0 }
        #expect(entries.count == ids.count * versions)
        #expect(Set(entries.map(\.id)).count == entries.count, "a record was handed out twice")
        #expect(entries.map(\.cursor) == entries.map(\.cursor).sorted())
        for id in ids {
            #expect(entries.filter { $0.session == id }.map(\.version) == Array(1...versions), "session \(id)")
        }
    }

    /// A purge removes a session's records, or those of an attribute's value, from the feed and
    /// from history; the usage counts what is left; the floor stays.
    @Test func purgesRemoveRecordsBySessionAndByAttribute() throws {
        let database = try Database()
        let store = try database.store()
        var sessions: [String] = []
        for (index, tenant) in ["a", "b", "a"].enumerated() {
            var (session, events) = try database.session()
            let attributes: [String: JSONValue] = ["tenant": .string(tenant), "rank": .int(index)]
            #expect(try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1, attributes: attributes)))
            let expected = session.state.version
            (session, events) = try database.changed(session)
            #expect(
                try store.update(
                    session, expectedVersion: expected, events: events, eventsJSON: events.jsonBytes, keeping: nil,
                    record: Self.record(session.id, 2, attributes: attributes)))
            sessions.append(session.id)
        }
        #expect(try store.purgeFeed(.attribute("tenant", .string("a"))) == 4)
        #expect(try store.purgeFeed(.attribute("tenant", .string("c"))) == 0)
        #expect(try store.history(of: sessions[0], after: 0, limit: 10).isEmpty)
        #expect(try Self.readAll(store).map(\.id) == [sessions[1] + ":1", sessions[1] + ":2"])
        #expect(try store.purgeFeed(.attribute("rank", .int(1))) == 2)
        #expect(try Self.readAll(store).isEmpty)

        let (session, events) = try database.session()
        #expect(try store.insert(session, events: events, keeping: nil, record: Self.record(session.id, 1)))
        let (other, otherEvents) = try database.session()
        let kept = Self.record(other.id, 1)
        #expect(try store.insert(other, events: otherEvents, keeping: nil, record: kept))
        #expect(try store.purgeFeed(.session(session.id)) == 1)
        #expect(try Self.readAll(store).map(\.id) == [other.id + ":1"])
        #expect(try store.feedFloor() == .start)
        // A store just opened counts afresh (the usage is kept for a few seconds).
        let usage = try database.store(connections: 1).feedUsage()
        #expect(usage.records == 1)
        #expect(usage.bytes == kept.cost)
    }

    /// The sweep removes records older than the cutoff, then the oldest until the rest fit the
    /// bytes; the floor moves to the newest record swept, and the usage counts what is left.
    @Test func theSweepRemovesOldRecordsThenTheOldestBeyondTheBytesAndMovesTheFloor() throws {
        let database = try Database()
        let store = try database.store()
        var records: [FeedRecord] = []
        for step in 0..<8 {
            let (session, events) = try database.session()
            let record = Self.record(session.id, 1, time: Int64(1_000 + step * 100))
            #expect(try store.insert(session, events: events, keeping: nil, record: record))
            records.append(record)
        }
        #expect(try store.feedFloor() == .start)
        let all = try Self.readAll(store)
        try #require(all.map(\.id) == records.map(\.id))
        #expect(try store.sweepFeed(olderThan: 1_000, maxBytes: 1 << 30) == 0)
        #expect(try store.feedFloor() == .start)

        #expect(try store.sweepFeed(olderThan: 1_250, maxBytes: 1 << 30) == 3)
        #expect(try store.feedFloor() == all[2].cursor)
        #expect(try Self.readAll(store).map(\.id) == all.dropFirst(3).map(\.id))
        // A reader behind the floor is told (by the service); one at it reads on.
        #expect(try store.feed(from: .after(all[2].cursor), limit: 10, form: .full).entries.map(\.id) == all.dropFirst(3).map(\.id))

        let budget = records.suffix(2).map(\.cost).reduce(0, +)
        #expect(try store.sweepFeed(olderThan: 0, maxBytes: budget) == 3)
        #expect(try store.feedFloor() == all[5].cursor)
        #expect(try Self.readAll(store).map(\.id) == all.suffix(2).map(\.id))
        let usage = try database.store(connections: 1).feedUsage()
        #expect(usage.records == 2)
        #expect(usage.bytes == budget)

        // A purge leaves the floor where the sweep put it.
        #expect(try store.purgeFeed(.session(records[7].session)) == 1)
        #expect(try store.feedFloor() == all[5].cursor)
        #expect(try store.sweepFeed(olderThan: 0, maxBytes: 0) == 1)
        #expect(try store.feedFloor() == all[6].cursor)
        #expect(try Self.readAll(store).isEmpty)
        let emptied = try database.store(connections: 1).feedUsage()
        #expect(emptied.records == 0 && emptied.bytes == 0)
    }
}
