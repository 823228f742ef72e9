import Dispatch
import Foundation
import NavCore
import NavJSON
import Synchronization
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite store's feed: every applied change's record written with it (a create's and a
/// delete's in their transactions, an update's in its change log record), read back in cursor
/// order — from the table, from the log not folded yet, and after a crash — each once to a reader
/// paging on, and purged and swept for good.
@Suite struct SQLiteFeedTests {
    static let pathA = SQLiteStoreTests.pathA
    static let pathB = SQLiteStoreTests.pathB

    /// A store and a session service writing feed records, whose records carry the `tenant`
    /// context value, on a clock moved by hand.
    struct Fixture {
        let store: SQLiteStore
        let sessions: SessionService
        let clock: Locked<Int64>

        init(path: String, threshold: Int, files: any ChangeLogFiles = SystemFiles(), clock: Locked<Int64> = Locked(1_000_000)) throws {
            let graphs = GraphRegistry()
            let document = try JSONValue(
                parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
            _ = try graphs.add(document)
            store = try SQLiteStore(
                path: path, compactionThreshold: threshold, files: files, decode: StoreFactory.snapshotDecoder(graphs))
            var configuration = SessionService.Configuration(maxContextBytes: 64 * 1024)
            configuration.feed = FeedSettings(attributes: ["tenant"])
            self.clock = clock
            sessions = SessionService(store: store, graphs: graphs, configuration: configuration, now: { clock.withLock { $0 } })
        }

        func tick(_ milliseconds: Int64 = 1000) { clock.withLock { $0 += milliseconds } }

        /// A session whose context holds `tenant` (a configured attribute) and `email`, which is not.
        func create(tenant: JSONValue? = nil, email: String? = nil) throws -> String {
            tick()
            var context: [String: JSONValue] = [:]
            context["tenant"] = tenant
            context["email"] = email.map { .string($0) }
            return try sessions.create(graph: nil, start: nil, context: context).session.id
        }

        func navigate(_ id: String, _ path: String) throws {
            tick()
            let loaded = try #require(try store.load(id))
            _ = try sessions.mutate(id, change: .intent(.navigate(path)), ifMatch: nil, loaded: loaded)
        }

        /// Deletes through the store with the end record the service writes.
        func delete(_ id: String) throws {
            tick()
            let session = try #require(try store.load(id))
            var ended = session
            ended.touchedAt = clock.withLock { $0 }
            let record = SessionService.endRecord(of: ended, reason: .deleted, settings: FeedSettings(attributes: ["tenant"]))
            #expect(try store.delete(id, record: record))
        }

        /// Every record, paging on with `next`, `limit` at a time.
        func everything(limit: Int = 1000, form: FeedForm = .full) throws -> [FeedEntry] {
            var entries: [FeedEntry] = []
            var page = try store.feed(from: .oldest, limit: limit, form: form)
            while !page.entries.isEmpty {
                entries += page.entries
                page = try store.feed(from: .after(page.next), limit: limit, form: form)
            }
            return entries
        }

        func ids() throws -> [String] { try everything().map(\.id) }

        /// Ten sessions created, then 1,300 navigations among them, all in the log's current
        /// generation (with a threshold above that): the ids of their 1,310 records, in order.
        func busyGeneration() throws -> [String] {
            let ids = try (0..<10).map { _ in try create() }
            var records = ids.map { "\($0):1" }
            for round in 0..<130 {
                for id in ids {
                    try navigate(id, round.isMultiple(of: 2) ? SQLiteFeedTests.pathA : SQLiteFeedTests.pathB)
                    records.append("\(id):\(round + 2)")
                }
            }
            return records
        }
    }

    static func text(_ entry: FeedEntry) -> String { String(decoding: entry.json, as: UTF8.self) }

    static func increasing(_ entries: [FeedEntry]) -> Bool {
        zip(entries, entries.dropFirst()).allSatisfy { $0.cursor < $1.cursor }
    }

    /// Creates, changes and deletes come back in the order they were made, with a cursor each, in
    /// both forms: the full one with the context's values, the analytics one with those of the
    /// configured attributes only. With a generation every 2 changes some are read from the table
    /// and some from the log.
    @Test(arguments: [2, 100])
    func everyChangesRecordComesBackInCursorOrder(threshold: Int) throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: threshold)
        defer { fixture.store.close() }
        let a = try fixture.create(tenant: .string("acme"), email: "someone@example.com")
        try fixture.navigate(a, Self.pathA)
        let b = try fixture.create()
        try fixture.navigate(b, Self.pathA)
        try fixture.navigate(a, Self.pathB)
        try fixture.delete(b)
        fixture.store.waitForCompaction()
        let expected = ["\(a):1", "\(a):2", "\(b):1", "\(b):2", "\(a):3", "\(b):end"]

        let full = try fixture.store.feed(from: .oldest, limit: 100, form: .full)
        #expect(full.entries.map(\.id) == expected)
        #expect(Self.increasing(full.entries))
        #expect(full.next == full.entries.last?.cursor)
        #expect(full.entries.allSatisfy { $0.form == .full })
        let analytics = try fixture.store.feed(from: .oldest, limit: 100, form: .analytics)
        try #require(full.entries.count == 6 && analytics.entries.count == 6)
        #expect(Self.text(full.entries[0]).contains("someone@example.com"))
        #expect(analytics.entries.map(\.id) == expected)
        #expect(analytics.entries.map(\.cursor) == full.entries.map(\.cursor))
        #expect(!analytics.entries.contains { Self.text($0).contains("someone@example.com") })
        #expect(Self.text(analytics.entries[0]).contains("acme"))
        #expect(fixture.store.feedUsage().records == 6)

        // From a time: the records at or after it, in cursor order.
        let since = try fixture.store.feed(from: .since(full.entries[2].time), limit: 100, form: .full)
        #expect(since.entries.map(\.id) == Array(expected.dropFirst(2)))
        let none = try fixture.store.feed(from: .since(Int64.max), limit: 100, form: .full)
        #expect(none.entries.isEmpty && none.next == full.entries.last?.cursor)
        // From a time among the records after a cursor: where a reader that asked for a time and
        // has had no record yet goes on from.
        let time = full.entries[4].time
        let sinceAfter = try fixture.store.feed(from: .since(time, after: full.entries[1].cursor), limit: 100, form: .full)
        #expect(sinceAfter.entries.map(\.id) == full.entries.dropFirst(2).drop { $0.time < time }.map(\.id))
        let laterThanAll = try fixture.store.feed(from: .since(Int64.max, after: full.entries[1].cursor), limit: 100, form: .full)
        #expect(laterThanAll.entries.isEmpty && laterThanAll.next == full.entries.last?.cursor)
        // After the last: nothing, and the same cursor to read on from.
        let past = try fixture.store.feed(from: .after(full.next), limit: 100, form: .full)
        #expect(past.entries.isEmpty && past.next == full.next)
    }

    /// A fold writes a generation's records in transactions of at least 512 that go on while no
    /// other thread waits to write: all 1,300 records of one generation come back once, in order,
    /// after a reopening, whether the fold wrote them in one transaction or, with a writer
    /// waiting throughout, in three.
    @Test(arguments: [false, true])
    func aFoldWritesEveryRecordOnceWhetherOrNotAWriterWaits(writerWaits: Bool) throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var expected: [String] = []
        do {
            let fixture = try Fixture(path: path, threshold: 10_000)
            if writerWaits { fixture.store.writersWaiting.add(1, ordering: .relaxed) }
            expected = try fixture.busyGeneration()
            fixture.store.close()
            if writerWaits { fixture.store.writersWaiting.subtract(1, ordering: .relaxed) }
        }
        let reopened = try Fixture(path: path, threshold: 10_000)
        defer { reopened.store.close() }
        let entries = try reopened.everything()
        #expect(entries.map(\.id) == expected)
        #expect(Self.increasing(entries))
        #expect(try SQLiteSchemaTests.rows("feed", at: path).count == 1_310)
    }

    /// A fold whose transaction of records fails goes on, when it is tried again, from the first
    /// record not committed: each is inserted once (a second insert of a position would fail),
    /// and reads see every record meanwhile, from the table or the log.
    @Test func aFoldThatFailsMidwayGoesOnFromItsFirstRecordNotWritten() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var expected: [String] = []
        do {
            let fixture = try Fixture(path: path, threshold: 10_000)
            expected = try fixture.busyGeneration()
            // Chunks of 512 (a writer waits), and the second fails: records 523… are not written.
            let store = fixture.store
            store.writersWaiting.add(1, ordering: .relaxed)
            try store.withWriter { connection throws(StoreError) in
                try connection.execute(
                    "CREATE TEMP TRIGGER refuse BEFORE INSERT ON feed WHEN NEW.position = 600 BEGIN SELECT RAISE(ABORT, 'refused'); END")
            }
            #expect(throws: StoreError.self) { try store.folding { fold throws(StoreError) in try store.compactEverything(fold) } }
            #expect(try SQLiteSchemaTests.rowCount("feed", of: store) == 10 + 512)
            #expect(try fixture.everything().map(\.id) == expected)
            try store.withWriter { connection throws(StoreError) in try connection.execute("DROP TRIGGER refuse") }
            try store.folding { fold throws(StoreError) in try store.compactEverything(fold) }
            #expect(try SQLiteSchemaTests.rowCount("feed", of: store) == 1_310)
            store.writersWaiting.subtract(1, ordering: .relaxed)
            store.close()
        }
        let reopened = try Fixture(path: path, threshold: 10_000)
        defer { reopened.store.close() }
        #expect(try reopened.everything().map(\.id) == expected)
    }

    /// A reader paging two at a time while changes go on (and generations are folded) sees every
    /// record once, in cursor order.
    @Test func pagingWithNextSeesEachRecordOnce() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 3)
        defer { fixture.store.close() }
        let empty = try fixture.store.feed(from: .oldest, limit: 2, form: .analytics)
        #expect(empty.entries.isEmpty && empty.next == .start)
        var ids = [try fixture.create(), try fixture.create()]
        var read: [FeedEntry] = []
        var next = FeedCursor.start
        for round in 0..<12 {
            let page = try fixture.store.feed(from: .after(next), limit: 2, form: .analytics)
            read += page.entries
            next = page.next
            try fixture.navigate(ids[round % 2], round % 4 < 2 ? Self.pathA : Self.pathB)
            if round == 5 { ids.append(try fixture.create()) }
            if round == 8 { try fixture.delete(ids[2]) }
        }
        while true {
            let page = try fixture.store.feed(from: .after(next), limit: 2, form: .analytics)
            if page.entries.isEmpty { break }
            read += page.entries
            next = page.next
        }
        #expect(read.count == 2 + 12 + 1 + 1)
        #expect(Set(read.map(\.id)).count == read.count, "a record read twice")
        #expect(Self.increasing(read))
        #expect(read.map(\.id) == (try fixture.ids()))
    }

    /// A reader paging on while creates and changes run on other threads (and generations are
    /// folded under it) is never handed a cursor past a record that appears later: it reads every
    /// record once, in cursor order.
    @Test func aReaderPagingDuringConcurrentWritesSeesEveryRecordOnce() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 5)
        defer { fixture.store.close() }
        let ids = try (0..<4).map { _ in try fixture.create() }
        let failures = Locked<[String]>([])
        let writers = DispatchGroup()
        for writer in 0..<2 {
            writers.enter()
            Thread {
                defer { writers.leave() }
                for step in 0..<60 {
                    do {
                        try fixture.navigate(ids[writer * 2 + step % 2], (step / 2) % 2 == 0 ? Self.pathA : Self.pathB)
                        if step % 8 == 0 { _ = try fixture.create() }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }.start()
        }
        var read: [FeedEntry] = []
        var next = FeedCursor.start
        var writing = true
        while true {
            let page = try fixture.store.feed(from: .after(next), limit: 3, form: .analytics)
            read += page.entries
            next = page.next
            if page.entries.isEmpty {
                if !writing { break }
                writing = writers.wait(timeout: .now() + .milliseconds(1)) == .timedOut
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(read.count == 4 + 2 * 60 + 2 * 8)
        #expect(Set(read.map(\.id)).count == read.count, "a record read twice")
        #expect(Self.increasing(read))
        #expect(read.map(\.id) == (try fixture.ids()))
    }

    /// Records of changes only in the change log when the process dies come back at the same
    /// cursors, folded in at start-up; so do those folded in before; and numbering goes on above
    /// every one of them.
    @Test func recordsSurviveACrashAndAReopeningAtTheirCursors() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let clock = Locked<Int64>(1_000_000)
        var before: [String] = []
        var cursors: [FeedCursor] = []
        var a = ""
        do {
            // Dropped without close(): nothing folded since the generation below.
            let fixture = try Fixture(path: path, threshold: 4, clock: clock)
            a = try fixture.create()
            let b = try fixture.create()
            for step in 0..<5 { try fixture.navigate(step % 2 == 0 ? a : b, step % 4 < 2 ? Self.pathA : Self.pathB) }
            try fixture.delete(b)
            fixture.store.waitForCompaction()
            let entries = try fixture.everything()
            before = entries.map(\.id)
            cursors = entries.map(\.cursor)
            #expect(before.count == 8)
        }
        do {
            let reopened = try Fixture(path: path, threshold: 4, clock: clock)
            let entries = try reopened.everything()
            #expect(entries.map(\.id) == before)
            #expect(entries.map(\.cursor) == cursors)
            #expect(reopened.store.feedUsage().records == 8)
            try reopened.navigate(a, Self.pathB)
            let newest = try #require(try reopened.everything().last)
            #expect(newest.cursor > (cursors.last ?? .start))
            before.append(newest.id)
            cursors.append(newest.cursor)
            reopened.store.close()
        }
        let closed = try Fixture(path: path, threshold: 4, clock: clock)
        defer { closed.store.close() }
        let entries = try closed.everything()
        #expect(entries.map(\.id) == before)
        #expect(entries.map(\.cursor) == cursors)
        #expect(try closed.store.history(of: a, after: 0, limit: 100).map(\.version) == [1, 2, 3, 4, 5])
    }

    /// Positions removed by a sweep or a purge are never handed out again, after a restart too: a
    /// reader holding one of them would skip the new records.
    @Test func positionsKeepGrowingAfterEverythingIsRemovedAndARestart() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var newest = FeedCursor.start
        do {
            let fixture = try Fixture(path: path, threshold: 100)
            let a = try fixture.create()
            try fixture.navigate(a, Self.pathA)
            let b = try fixture.create()
            newest = try fixture.store.feed(from: .oldest, limit: 10, form: .full).next
            #expect(try fixture.store.purgeFeed(.session(b)) == 1)
            #expect(try fixture.store.sweepFeed(olderThan: 0, maxBytes: 0) == 2)
            #expect(fixture.store.feedUsage().records == 0 && fixture.store.feedUsage().bytes == 0)
            let empty = try fixture.store.feed(from: .oldest, limit: 10, form: .full)
            #expect(empty.entries.isEmpty && empty.next == newest)
            fixture.store.close()
        }
        let reopened = try Fixture(path: path, threshold: 100)
        defer { reopened.store.close() }
        #expect(try reopened.store.feed(from: .oldest, limit: 10, form: .full).next == newest)
        let c = try reopened.create()
        let page = try reopened.store.feed(from: .after(newest), limit: 10, form: .full)
        #expect(page.entries.map(\.id) == ["\(c):1"])
        #expect(page.next > newest)
    }

    /// Only cursors handed out are given (``SQLiteStore/feedGave(_:)``): the newest, and every
    /// one below it, purged or not, after a crash too; none above it, none in PostgreSQL's form.
    /// The service answers any other `after` with 400 `invalid_request`, `param` `after`.
    @Test func onlyCursorsHandedOutAreGivenAfterACrashToo() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let clock = Locked<Int64>(1_000_000)
        var newest = FeedCursor.start
        func refused(_ fixture: Fixture, _ cursor: FeedCursor) {
            do {
                _ = try fixture.sessions.feed(from: .after(cursor), limit: 10, form: .full)
                Issue.record("cursor \(cursor) was answered")
            } catch {
                #expect(error.code == .invalidRequest && error.param == "after", "\(cursor)")
            }
        }
        do {
            // Dropped without close(): some records only in the change log.
            let fixture = try Fixture(path: path, threshold: 4, clock: clock)
            let a = try fixture.create()
            for step in 0..<3 { try fixture.navigate(a, step % 2 == 0 ? Self.pathA : Self.pathB) }
            let b = try fixture.create()
            try fixture.navigate(b, Self.pathA)
            newest = try #require(try fixture.everything().last).cursor
            #expect(try fixture.store.feedGave(newest) && fixture.store.feedGave(.start))
            #expect(try !fixture.store.feedGave(FeedCursor(position: newest.position + 1)))
            #expect(try !fixture.store.feedGave(FeedCursor(transaction: 1, position: 0)))
            refused(fixture, FeedCursor(position: newest.position + 1))
            refused(fixture, FeedCursor(transaction: 1, position: 0))
            #expect(try fixture.sessions.feed(from: .after(newest), limit: 10, form: .full).next == newest)
            #expect(try fixture.store.purgeFeed(.session(b)) == 2)
            #expect(try fixture.store.feedGave(newest))
            // No fold still running when it is dropped: one would hold the store, and its lock on
            // the file, past the end of this scope, and the reopening below would find it in use.
            fixture.store.waitForCompaction()
        }
        let reopened = try Fixture(path: path, threshold: 4, clock: clock)
        defer { reopened.store.close() }
        #expect(try reopened.store.feedGave(newest))
        #expect(try reopened.sessions.feed(from: .after(newest), limit: 10, form: .full).next == newest)
        refused(reopened, FeedCursor(position: newest.position + 1))
        _ = try reopened.create()
        let created = try #require(try reopened.everything().last).cursor
        #expect(created > newest)
        #expect(try reopened.store.feedGave(created))
    }

    /// A position a write holds in flight is not handed out, so not given, until every write
    /// below it is durable or has failed; a failed write's position is given once a later one is.
    @Test func aPositionInFlightIsGivenOnlyOnceEveryWriteBelowItEnded() {
        let record = FeedRecord(
            session: "a", version: 1, isEnd: false, graph: "news", time: 1, attributes: [:], full: Array("{}".utf8),
            analytics: Array("{}".utf8))
        var state = FeedState(lastPosition: 5, records: 5, bytes: 0, floor: 0)
        #expect(state.gave(FeedCursor(position: 5)))
        let first = state.allocate(1)
        let second = state.allocate(1)
        #expect(!state.gave(FeedCursor(position: 6)) && !state.gave(FeedCursor(position: 7)))
        state.resolve(second, shown: [record])
        #expect(!state.gave(FeedCursor(position: 7)))
        state.resolve(first, shown: [])
        #expect(state.gave(FeedCursor(position: 6)) && state.gave(FeedCursor(position: 7)))
        #expect(!state.gave(FeedCursor(position: 8)))
    }

    /// A purge by session or by an attribute's value (compared as JSON: the string "7" is not the
    /// number 7) removes those records and no others, for good: records only in the change log
    /// when it ran do not come back after a crash.
    @Test func aPurgeBySessionOrAttributeRemovesThoseRecordsForGood() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var kept: [String] = []
        var (a, b, c, d) = ("", "", "", "")
        do {
            // Dropped without close(), every change only in the change log when the purges run.
            let fixture = try Fixture(path: path, threshold: 100)
            a = try fixture.create(tenant: .string("t1"))
            b = try fixture.create(tenant: .string("t2"))
            c = try fixture.create(tenant: .int(7))
            d = try fixture.create(tenant: .string("7"))
            for id in [a, b, c, d] { try fixture.navigate(id, Self.pathA) }
            let usage = fixture.store.feedUsage()
            #expect(usage.records == 8)
            let recordsOfA = try fixture.everything().filter { $0.session == a }.count
            #expect(recordsOfA == 2)

            #expect(try fixture.store.purgeFeed(.attribute("tenant", .string("t1"))) == 2)
            #expect(try fixture.store.purgeFeed(.attribute("tenant", .int(7))) == 2)
            #expect(try fixture.store.purgeFeed(.attribute("region", .string("t2"))) == 0)
            #expect(try fixture.store.purgeFeed(.session(b)) == 2)
            kept = try fixture.ids()
            #expect(kept == ["\(d):1", "\(d):2"])
            #expect(fixture.store.feedUsage().records == 2)
            #expect(fixture.store.feedUsage().bytes < usage.bytes)
            #expect(try fixture.store.history(of: a, after: 0, limit: 10).isEmpty)
            // The purge moves no floor: no reader missed a record it may still read.
            #expect(try fixture.store.feedFloor() == .start)
        }
        let reopened = try Fixture(path: path, threshold: 100)
        defer { reopened.store.close() }
        #expect(try reopened.ids() == kept)
        #expect(reopened.store.feedUsage().records == 2)
        #expect(try reopened.store.history(of: c, after: 0, limit: 10).isEmpty)
    }

    /// The sweep removes records older than the retention, then the oldest while the rest take
    /// more than the bytes allowed; the floor is the newest swept, kept across a restart.
    @Test func aSweepByAgeThenByBytesMovesTheFloor() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let clock = Locked<Int64>(1_000_000)
        var kept: [FeedEntry] = []
        var floor = FeedCursor.start
        do {
            let fixture = try Fixture(path: path, threshold: 3, clock: clock)
            let a = try fixture.create()
            for step in 0..<5 { try fixture.navigate(a, step % 2 == 0 ? Self.pathA : Self.pathB) }
            let all = try fixture.everything()
            try #require(all.count == 6)
            #expect(try fixture.store.sweepFeed(olderThan: all[2].time, maxBytes: Int.max) == 2)
            #expect(try fixture.store.feedFloor() == all[1].cursor)
            #expect(try fixture.everything().map(\.id) == all.dropFirst(2).map(\.id))
            // One byte less than what is left: the oldest goes.
            let usage = fixture.store.feedUsage()
            #expect(usage.records == 4)
            #expect(try fixture.store.sweepFeed(olderThan: 0, maxBytes: usage.bytes - 1) == 1)
            floor = try fixture.store.feedFloor()
            #expect(floor == all[2].cursor)
            kept = try fixture.everything()
            #expect(kept.map(\.id) == all.dropFirst(3).map(\.id))
            #expect(fixture.store.feedUsage().records == 3 && fixture.store.feedUsage().bytes < usage.bytes)
            // Nothing more to sweep: nothing moves.
            #expect(try fixture.store.sweepFeed(olderThan: 0, maxBytes: Int.max) == 0)
            #expect(try fixture.store.feedFloor() == floor)
            #expect(try fixture.store.history(of: a, after: 0, limit: 10).map(\.version) == [4, 5, 6])
            fixture.store.close()
        }
        let reopened = try Fixture(path: path, threshold: 3, clock: clock)
        defer { reopened.store.close() }
        #expect(try reopened.store.feedFloor() == floor)
        #expect(try reopened.everything().map(\.cursor) == kept.map(\.cursor))
        #expect(reopened.store.feedUsage().records == 3)
    }

    /// Sessions the sweep expires get their end records, with the session's last version plus one.
    @Test func expiredSessionsGetTheirEndRecords() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100)
        defer { fixture.store.close() }
        let a = try fixture.create()
        try fixture.navigate(a, Self.pathA)
        let b = try fixture.create()
        fixture.tick(25 * 3600 * 1000)
        let c = try fixture.create()
        #expect(try fixture.sessions.sweep() == 2)
        let ids = try fixture.ids()
        #expect(Array(ids.prefix(4)) == ["\(a):1", "\(a):2", "\(b):1", "\(c):1"])
        #expect(Set(ids.dropFirst(4)) == ["\(a):end", "\(b):end"])
        #expect(try fixture.store.history(of: a, after: 0, limit: 10).map(\.version) == [1, 2, 3])
        #expect(try fixture.store.history(of: a, after: 0, limit: 10).last?.isEnd == true)
    }

    /// A feed watcher that reads on from where it got to whenever it is told to look, as a long
    /// poll or a stream does.
    final class FeedReader: SessionWatcher {
        let store: SQLiteStore
        let seen = Locked<(after: FeedCursor, ids: [String])>((.start, []))

        init(store: SQLiteStore) { self.store = store }

        func receive(_ change: LiveChange) { refresh() }
        func refresh() {
            seen.withLock { seen in
                guard let page = try? store.feed(from: .after(seen.after), limit: 100, form: .analytics) else { return }
                seen.ids += page.entries.map(\.id)
                seen.after = page.next
            }
        }
        func end(_ reason: EndReason) {}
        func ping() {}
    }

    /// A write that took a feed position and then failed held back a record written after it;
    /// when it fails, the feed's watchers are told, and read that record at once, not at the next
    /// write or the end of their wait.
    @Test func aFailedWriteThatHeldBackARecordTellsTheWatchers() throws {
        let folder = try TemporaryFolder()
        let faults = ChangeLogFaults()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100, files: faults)
        defer { fixture.store.close() }
        let a = try fixture.create()
        let reader = FeedReader(store: fixture.store)
        try fixture.sessions.live.add(reader, to: SessionService.feedWatchKey, limit: Int.max)
        reader.refresh()
        #expect(reader.seen.withLock { $0.ids } == ["\(a):1"])

        // The navigation takes the next position and waits in its `pwrite`, then fails.
        faults.holdNextWrite(failingWith: EIO)
        let failed = DispatchSemaphore(value: 0)
        let navigation = Thread {
            _ = try? fixture.navigate(a, Self.pathA)
            failed.signal()
        }
        navigation.start()
        try #require(faults.waitUntilHeld())
        // A create meanwhile takes the position after it: written, but not shown past the hole.
        let b = try fixture.create()
        #expect(reader.seen.withLock { $0.ids } == ["\(a):1"])
        faults.releaseHeldWrite()
        #expect(failed.wait(timeout: .now() + 10) == .success)
        #expect(reader.seen.withLock { $0.ids } == ["\(a):1", "\(b):1"])
    }

    /// A change the change log cannot take, and a create or a delete SQLite cannot commit, leave
    /// no record; what is written after they heal comes after every earlier record.
    @Test func aFailedWriteLeavesNoRecord() throws {
        #expect(!SQLiteFaults.installed.isEmpty, "SQLite's VFS lets no write call be replaced")
        let folder = try TemporaryFolder()
        let faults = ChangeLogFaults()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100, files: faults)
        defer { fixture.store.close() }
        let a = try fixture.create()
        try fixture.navigate(a, Self.pathA)

        faults.failWrites(ENOSPC)
        #expect(throws: (any Error).self) { try fixture.navigate(a, Self.pathB) }
        faults.heal()
        SQLiteFaults.fail(under: folder.path, with: EIO)
        #expect(throws: (any Error).self) { _ = try fixture.create() }
        #expect(throws: (any Error).self) { try fixture.delete(a) }
        SQLiteFaults.heal(folder.path)
        #expect(try fixture.ids() == ["\(a):1", "\(a):2"])
        #expect(fixture.store.feedUsage().records == 2)

        #expect(StoreFaultTests.waitUntilAvailable(fixture.store))
        try fixture.navigate(a, Self.pathB)
        let b = try fixture.create()
        let entries = try fixture.everything()
        #expect(entries.map(\.id) == ["\(a):1", "\(a):2", "\(a):3", "\(b):1"])
        #expect(Self.increasing(entries))
        #expect(try fixture.store.history(of: a, after: 0, limit: 10).map(\.version) == [1, 2, 3])
    }

    /// A session's history: its records above a version, in version order, in the full form,
    /// at most as many as asked — from the table and the log alike, and after its deletion.
    @Test func historyIsASessionsRecordsInVersionOrder() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 3)
        defer { fixture.store.close() }
        let a = try fixture.create()
        let b = try fixture.create()
        for step in 0..<6 {
            try fixture.navigate(a, step % 2 == 0 ? Self.pathA : Self.pathB)
            try fixture.navigate(b, step % 2 == 0 ? Self.pathA : Self.pathB)
        }
        try fixture.delete(a)
        let history = try fixture.store.history(of: a, after: 0, limit: 100)
        #expect(history.map(\.id) == (1...7).map { "\(a):\($0)" } + ["\(a):end"])
        #expect(history.allSatisfy { $0.form == .full && $0.session == a })
        #expect(try fixture.store.history(of: a, after: 3, limit: 2).map(\.version) == [4, 5])
        #expect(try fixture.store.history(of: b, after: 6, limit: 100).map(\.version) == [7])
        #expect(try fixture.store.history(of: "0123", after: 0, limit: 100).isEmpty)
    }
}

extension SQLiteFeedTests {
    /// The feed's index is by block of positions first: a session's records spread over several
    /// blocks still come back in version order, by history pages of any size, to a purge, and to
    /// a funnel, which must see a session's early view before its late one however many blocks
    /// lie between them. Read while the newest records are still in the log, and again once all
    /// of them are in the table.
    @Test func aSessionsRecordsInSeveralBlocksAreReadInVersionOrder() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let fixture = try Fixture(path: path, threshold: 64)
        let early = try fixture.create()
        try fixture.navigate(early, "^/top/list_news(category=1)")
        let busy = try (0..<10).map { _ in try fixture.create() }
        for round in 0..<220 {
            for id in busy { try fixture.navigate(id, round.isMultiple(of: 2) ? Self.pathA : Self.pathB) }
        }
        try fixture.navigate(early, "show_news(id=3)")

        func check(_ store: SQLiteStore, _ context: Comment) throws {
            #expect(try store.history(of: early, after: 0, limit: 10).map(\.version) == [1, 2, 3], context)
            #expect(try store.history(of: early, after: 1, limit: 1).map(\.version) == [2], context)
            #expect(try store.history(of: early, after: 2, limit: 5).map(\.version) == [3], context)
            var versions: [Int] = []
            while case let page = try store.history(of: busy[3], after: versions.last ?? 0, limit: 7), !page.isEmpty {
                versions += page.map(\.version)
            }
            #expect(versions == Array(1...221), context)
            // Only `early` views list_news, in the first block, and show_news after it, in the third.
            let range = fixture.clock.withLock { 0..<$0 + 1 }
            let query = FunnelQuery(graph: "news", steps: ["list_news", "show_news"], within: 86_400_000, range: range)
            #expect(try store.funnel(query) == [1, 1], context)
            let traffic = try store.traffic(graph: "news", in: range)
            #expect(traffic.scenes["list_news"] == 1 && traffic.scenes["show_news"] == 1 + 10 * 110, context)
        }
        try check(fixture.store, "partly in the log")
        fixture.store.close()
        let reopened = try Fixture(path: path, threshold: 64, clock: fixture.clock)
        defer { reopened.store.close() }
        #expect(try SQLiteSchemaTests.rows("feed", at: path).count == 3 + 10 * 221)
        let blocks = try SQLiteConnection(path: path)
        let spread = try blocks.statement(
            "SELECT MIN(position >> \(SQLiteStore.feedBlockShift)), MAX(position >> \(SQLiteStore.feedBlockShift)) FROM feed WHERE session_id = ?"
        ).bind(1, early)
        _ = try spread.step()
        #expect(spread.int(0) == 0 && spread.int(1) >= 2, "its first and last records two blocks apart")
        spread.reset()
        blocks.close()
        try check(reopened.store, "all in the table")
        #expect(try reopened.store.purgeFeed(.session(early)) == 3)
        #expect(try reopened.store.history(of: early, after: 0, limit: 10).isEmpty)
        #expect(try reopened.store.history(of: busy[0], after: 0, limit: 300).count == 221)
    }
}
