import Foundation
import Logging
import NavCore
import NavJSON
import Synchronization
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite store's change log: changes appended, folded into `sessions` and `event_log`
/// by compaction, and nothing lost or reordered across compactions, deletes and reopenings.
@Suite struct SQLiteStoreTests {
    static let pathA = "^/top/list_news(category=1)/show_news(id=2)"
    static let pathB = "^/top"

    /// A store and a session service over it, on the news graph, compacting every `threshold` changes.
    struct Fixture {
        static let canonicalA = "/top/list_news(category=1)/show_news(id=2)"
        let store: SQLiteStore
        let sessions: SessionService

        init(
            path: String, threshold: Int, retained: Int = 1000, synchronousFull: Bool = false,
            cacheBytes: Int = SQLiteStore.defaultCacheBytes,
            acceptingLoss: Bool = false, files: any ChangeLogFiles = SystemFiles(),
            now: @escaping @Sendable () -> Int64 = Clock.milliseconds,
            answerBytes: Int = SQLiteStore.defaultAnswerBytesPerGeneration,
            logBytes: Int = SQLiteStore.defaultLogBytesPerGeneration
        ) throws {
            let graphs = GraphRegistry()
            let document = try JSONValue(
                parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
            _ = try graphs.add(document)
            store = try SQLiteStore(
                path: path, synchronousFull: synchronousFull, retainedEvents: retained, compactionThreshold: threshold,
                answerBytesPerGeneration: answerBytes, logBytesPerGeneration: logBytes, cacheBytes: cacheBytes,
                acceptingLoss: acceptingLoss, files: files, decode: StoreFactory.snapshotDecoder(graphs)
            )
            sessions = SessionService(store: store, graphs: graphs, configuration: .init(maxContextBytes: 64 * 1024), now: now)
        }

        func navigate(_ id: String, _ path: String) throws -> SessionService.Mutation {
            let loaded = try #require(try store.load(id))
            return try sessions.mutate(id, change: .intent(.navigate(path)), ifMatch: nil, loaded: loaded)
        }

        func allEvents(_ id: String) throws -> [LifecycleEvent] {
            try store.events(of: id, after: 0, limit: 100_000)
        }
    }

    @Test func changesSurviveCompactionAndReopeningWithEveryEventInOrder() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var ids: [String] = []
        var expected: [String: (version: Int, path: String, events: [LifecycleEvent])] = [:]
        do {
            // Compaction every 5 changes: the 23 below cross it several times, mid-session.
            let fixture = try Fixture(path: path, threshold: 5)
            for _ in 0..<3 {
                let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
                ids.append(created.session.id)
                expected[created.session.id] = (created.session.state.version, created.session.state.path.description, created.events)
            }
            for step in 0..<23 {
                let id = ids[step % 3 == 2 ? 0 : step % 3]  // the first session twice as often
                let mutation = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB)
                var entry = try #require(expected[id])
                entry.version = mutation.session.state.version
                entry.path = mutation.session.state.path.description
                entry.events += mutation.events
                expected[id] = entry
                #expect(try fixture.allEvents(id) == entry.events, "step \(step): events read back while logged")
            }
            // No close(): what is logged must come back as if the process had died here. (The
            // wait only lets the store go away at once, releasing its lock on the file.)
            fixture.store.waitForCompaction()
        }
        for round in 0..<2 {
            let fixture = try Fixture(path: path, threshold: 5)
            for id in ids {
                let entry = try #require(expected[id])
                let session = try #require(try fixture.store.load(id), "round \(round)")
                #expect(session.state.version == entry.version)
                #expect(session.state.path.description == entry.path)
                #expect(try fixture.allEvents(id) == entry.events, "round \(round)")
                #expect(try fixture.store.events(of: id, after: 10, limit: 3) == Array(entry.events.filter { $0.seq > 10 }.prefix(3)))
            }
            #expect(try fixture.store.list(limit: 10).map(\.state.version).sorted() == ids.compactMap { expected[$0]?.version }.sorted())
            fixture.store.close()
        }
    }

    /// A change logs its session's whole snapshot, so a tiny change to a large session logs all
    /// of it. A generation is sealed by its bytes as well as by its changes, and writers wait for
    /// the fold when it falls behind: the log on disk and the snapshots waiting in memory to be
    /// folded stay within about four times the bound, however many changes there are.
    @Test func changesToLargeSessionsAreBoundedByTheLogsBytes() throws {
        let folder = try TemporaryFolder()
        let bound = 64 << 10
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 1_000_000, logBytes: bound)
        func patch(_ id: String, _ patch: JSONValue) throws {
            let loaded = try #require(try fixture.store.load(id))
            _ = try fixture.sessions.mutate(id, change: .intent(.patchState(screen: "e1", patch: patch)), ifMatch: nil, loaded: loaded)
        }
        var ids: [String] = []
        for _ in 0..<8 {
            let id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            let blob = JSONValue.string(String(repeating: "x", count: 20_000))
            try patch(id, ["blob": blob])
            ids.append(id)
        }
        func logBytes() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("-changes-") }.reduce(0) {
                // A file the compactor removes meanwhile holds nothing.
                $0 + ((try? FileManager.default.attributesOfItem(atPath: "\(folder.path)/\($1)"))?[.size] as? Int ?? 0)
            }
        }
        var most = (log: 0, folds: 0)
        for round in 0..<20 {
            for id in ids {
                try patch(id, ["n": .int(round)])
            }
            let folds = fixture.store.withPublished {
                (($0.compacting?.folds.values.map(\.snapshot.count) ?? []) + $0.pending.values.map(\.snapshot.count)).reduce(0, +)
            }
            most = (max(most.log, try logBytes()), max(most.folds, folds))
        }
        // 160 changes of some 20 KB: 3.2 MB logged in all, never more than four bounds at once
        // (with a record or two of slack).
        #expect(most.log <= 4 * bound + 2 * 21_000, "the log held \(most.log) bytes")
        #expect(most.folds <= 4 * bound + 2 * 21_000, "the folds held \(most.folds) bytes")
        fixture.store.close()
        let reopened = try Fixture(path: "\(folder.path)/navd.db", threshold: 1_000_000, logBytes: bound)
        for id in ids {
            let state = try #require(try reopened.store.load(id)).state
            #expect(state.screens.first?.state["n"] == .int(19))
            #expect(state.screens.first?.state["blob"]?.stringValue?.count == 20_000)
        }
        reopened.store.close()
    }

    @Test func aWriteBasedOnAnOldVersionIsRefusedWhileLogged() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100)
        let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        let stale = try #require(try fixture.store.load(created.session.id))
        _ = try fixture.navigate(created.session.id, Self.pathA)
        var next = stale
        next.state.version += 1
        #expect(try fixture.store.update(next, expectedVersion: stale.state.version, events: [], eventsJSON: Array("[]".utf8)) == false)
        #expect(try fixture.store.load(created.session.id)?.state.path.description == "/top/list_news(category=1)/show_news(id=2)")
    }

    @Test func deletingASessionTakesItsLoggedChangesWithIt() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var doomed = ""
        var kept = ""
        do {
            // Dropped without close(): the reopening below recovers from the change log.
            let fixture = try Fixture(path: path, threshold: 100)
            doomed = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            kept = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            for step in 0..<4 {
                _ = try fixture.navigate(doomed, step % 2 == 0 ? Self.pathA : Self.pathB)
                _ = try fixture.navigate(kept, step % 2 == 0 ? Self.pathA : Self.pathB)
            }
            #expect(try fixture.store.delete(doomed))
            #expect(try fixture.store.load(doomed) == nil)
            #expect(try fixture.allEvents(doomed).isEmpty)
            fixture.store.waitForCompaction()
        }
        let reopened = try Fixture(path: path, threshold: 100)
        #expect(try reopened.store.load(doomed) == nil)
        #expect(try reopened.store.load(kept)?.state.version == 5)
        #expect(try reopened.store.count() == 1)
    }

    @Test func aSweepSeesTheLoggedTouchTime() throws {
        let folder = try TemporaryFolder()
        let clock = Locked<Int64>(1_000_000)  // moved by hand
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100, now: { clock.withLock { $0 } })
        let idle = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        let busy = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        clock.withLock { $0 += 60_000 }
        _ = try fixture.navigate(busy, Self.pathA)  // touched_at only in the change log so far
        #expect(try fixture.store.deleteExpired(touchedBefore: 1_000_000 + 30_000).count == 1)
        #expect(try fixture.store.load(idle) == nil)
        #expect(try fixture.store.load(busy) != nil)
    }

    /// More expired sessions than one chunk (a sweep deletes 128 per transaction): all of them
    /// go, and those touched since, whose touch is only logged or cached, stay, in any chunk.
    @Test func aSweepOfManyChunksDeletesExactlyTheExpired() throws {
        let folder = try TemporaryFolder()
        let clock = Locked<Int64>(1_000_000)
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 10_000, now: { clock.withLock { $0 } })
        var ids: [String] = []
        for _ in 0..<300 { ids.append(try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id) }
        clock.withLock { $0 += 60_000 }
        let touched = Set(stride(from: 0, to: 300, by: 7).map { ids[$0] })
        for id in touched { _ = try fixture.navigate(id, Self.pathA) }
        let deleted = try fixture.store.deleteExpired(touchedBefore: 1_000_000 + 30_000)
        #expect(Set(deleted.map(\.id)) == Set(ids).subtracting(touched))
        for id in ids { #expect((try fixture.store.load(id) != nil) == touched.contains(id)) }
    }

    @Test func aHotSessionKeepsAboutTheRetainedEventsThroughCompaction() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 40, retained: 50)
        let id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        var last: [LifecycleEvent] = []
        for step in 0..<120 {
            last = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB).events
        }
        let events = try fixture.allEvents(id)
        let newest = try #require(last.last?.seq)
        // Exactly the newest 50, whether they sit in the change log or in compacted batches.
        #expect(events.map(\.seq) == Array((newest - 49)...newest))
    }
}

extension SQLiteStoreTests {
    @Test func aSecondStoreOnTheSameFileIsRefused() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100)
        #expect(throws: StoreError.self) { try Fixture(path: "\(folder.path)/navd.db", threshold: 100) }
        fixture.store.close()
        // Once closed, the file is free again.
        let reopened = try Fixture(path: "\(folder.path)/navd.db", threshold: 100)
        reopened.store.close()
    }

    /// A database of a development build's schema 2 (events clustered by session in
    /// `event_batches`, no change log) is refused with what was found, and kept as it was with its
    /// sessions and events: no navd release wrote that shape, so none is migrated from it.
    @Test func aSchemaTwoDatabaseIsRefusedAndKept() throws {
        let folder = try TemporaryFolder()
        let scratch = "\(folder.path)/scratch.db"
        let path = "\(folder.path)/navd.db"
        do {
            let fixture = try Fixture(path: scratch, threshold: 2)
            let id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            for step in 0..<5 { _ = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB) }
            fixture.store.close()
        }
        try SQLiteSchemaTests.makeOldDatabase(at: path, through: 2)
        try SQLiteSchemaTests.run(
            """
            INSERT INTO sessions SELECT * FROM other.sessions;
            INSERT INTO event_batches SELECT session_id, first_seq, last_seq, body FROM other.event_log;
            """,
            on: path, attaching: scratch
        )
        let batches = try SQLiteSchemaTests.rows("event_batches", at: path)
        #expect(batches.count >= 2)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        do {
            _ = try Fixture(path: path, threshold: 2)
            Issue.record("a schema 2 database was opened")
        } catch let error as StoreError {
            #expect(
                error.message.contains("found schema version 2 (migrations 1…2), which only development builds of navd wrote"), "\(error)")
            #expect(
                error.message.contains(
                    "unexpected: table event_batches; missing: index event_log_session, table event_log, table store_meta"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(try SQLiteSchemaTests.rows("event_batches", at: path) == batches)
        #expect(try SQLiteSchemaTests.rows("sessions", at: path).count == 1)
    }
}

extension SQLiteStoreTests {
    /// A crash in the middle of appending leaves a short record: the session comes back at the
    /// change before it (that change was the last one acknowledged), and serving goes on.
    @Test func aRecordCutShortByACrashIsDropped() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var id = ""
        do {
            let fixture = try Fixture(path: path, threshold: 100)
            id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            for step in 0..<3 { _ = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB) }
            fixture.store.waitForCompaction()
        }
        let (file, _) = try #require(ChangeLog.files(prefix: path).last.map { ($0.1, $0.0) })
        let bytes = try #require(FileManager.default.contents(atPath: file))
        try Data(bytes.dropLast(7)).write(to: URL(fileURLWithPath: file))
        let reopened = try Fixture(path: path, threshold: 100)
        let session = try #require(try reopened.store.load(id))
        #expect(session.state.version == 3)
        #expect(session.state.path.description == "/top")
        _ = try reopened.navigate(id, Self.pathA)
        #expect(try reopened.store.load(id)?.state.version == 4)
        reopened.store.close()
        #expect(ChangeLog.files(prefix: path).isEmpty)
    }

    /// A database of a development build's schema 3 whose journal table still holds changes (it
    /// crashed) is refused with what was found, and the journal is kept with every change in it.
    @Test func aSchemaThreeJournalTableIsRefusedAndKeptWithItsChanges() throws {
        let folder = try TemporaryFolder()
        let scratch = "\(folder.path)/scratch.db"
        let path = "\(folder.path)/navd.db"
        do {
            let fixture = try Fixture(path: scratch, threshold: 100)
            let id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            for step in 0..<3 { _ = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB) }
            fixture.store.waitForCompaction()
        }
        // The logged changes, as schema 3 kept them in its journal table.
        let records = try ChangeLog.read(prefix: scratch).records
        #expect(records.count == 3)
        try SQLiteSchemaTests.makeOldDatabase(at: path, through: 3)
        try SQLiteSchemaTests.run(
            """
            INSERT INTO sessions SELECT * FROM other.sessions;
            INSERT INTO event_log (session_id, first_seq, last_seq, body) SELECT session_id, first_seq, last_seq, body FROM other.event_log;
            """,
            on: path, attaching: scratch
        )
        do {
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            for (index, record) in records.enumerated() {
                try connection.statement("INSERT INTO journal VALUES (?,?,?,?,?,?,?,?)")
                    .bind(1, Int64(index + 1)).bind(2, record.sessionID).bind(3, record.version).bind(4, utf8: record.snapshot)
                    .bind(5, record.touchedAt).bind(6, record.firstEvent).bind(7, record.lastEvent).bind(8, utf8: record.events).run()
            }
        }
        let journal = try SQLiteSchemaTests.rows("journal", at: path)
        #expect(journal.count == 3)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        do {
            _ = try Fixture(path: path, threshold: 100)
            Issue.record("a schema 3 database was opened")
        } catch let error as StoreError {
            #expect(
                error.message.contains("found schema version 3 (migrations 1…3), which only development builds of navd wrote"), "\(error)")
            #expect(error.message.contains("unexpected: table journal; missing: table store_meta"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: path) == bytes)
        #expect(try SQLiteSchemaTests.rows("journal", at: path) == journal, "every journalled change is kept")
        #expect(ChangeLog.files(prefix: path).isEmpty)
    }
}

extension SQLiteStoreTests {
    @Test func storeSpecOptions() throws {
        let folder = try TemporaryFolder()
        let graphs = GraphRegistry()
        func open(_ options: String) throws -> any SessionStore {
            try StoreFactory.open("sqlite:\(folder.path)/navd.db\(options)", graphs: graphs, connections: 1, logger: Logger(label: "test"))
        }
        for bad in ["?compact=0", "?compact=x", "?sync=sometimes", "?sync=full&fast=1", "?check=full"] {
            #expect(throws: StoreFactory.SpecError.self, "\(bad)") { try open(bad) }
        }
        let store = try #require(try open("?sync=full&compact=10") as? SQLiteStore)
        #expect(store.compactionThreshold == 10)
        store.close()
    }
}

extension SQLiteStoreTests {
    /// Navigations on several threads while the compactor runs every few changes and other
    /// threads read events and listings: every change lands once, in order, and survives reopening.
    @Test func concurrentChangesReadsAndCompactionsAgree() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let threads = 4
        let steps = 60
        var ids: [String] = []
        let recorded = Locked<[String: [LifecycleEvent]]>([:])
        do {
            let fixture = try Fixture(path: path, threshold: 7)
            for _ in 0..<threads {
                let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
                ids.append(created.session.id)
                recorded.withLock { $0[created.session.id] = created.events }
            }
            let failures = Locked<[String]>([])
            let sessionIDs = ids
            DispatchQueue.concurrentPerform(iterations: threads * 2) { worker in
                let id = sessionIDs[worker % threads]
                if worker < threads {
                    // One writer per session, so each session's changes are in a known order.
                    for step in 0..<steps {
                        do {
                            let mutation = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB)
                            recorded.withLock { $0[id, default: []] += mutation.events }
                        } catch {
                            failures.withLock { $0.append("write \(id) step \(step): \(error)") }
                        }
                    }
                } else {
                    for _ in 0..<steps / 3 {
                        do {
                            let events = try fixture.allEvents(id)
                            let seqs = events.map(\.seq)
                            if seqs != Array(1..<(seqs.count + 1)) { failures.withLock { $0.append("gap in \(seqs)") } }
                            _ = try fixture.store.list(limit: 100)
                        } catch {
                            failures.withLock { $0.append("read \(id): \(error)") }
                        }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
            for id in ids {
                #expect(try fixture.store.load(id)?.state.version == steps + 1)
                #expect(try fixture.allEvents(id) == recorded.withLock { $0[id] })
            }
            fixture.store.waitForCompaction()
        }
        let reopened = try Fixture(path: path, threshold: 7)
        for id in ids {
            #expect(try reopened.store.load(id)?.state.version == steps + 1)
            #expect(try reopened.allEvents(id) == recorded.withLock { $0[id] })
        }
        reopened.store.close()
    }
}

extension SQLiteStoreTests {
    /// A flipped byte in the middle of a change log, with whole records after it, is damage: the
    /// store refuses to open, naming the file and the offset, and keeps the file; `inspect` (`navd
    /// store check`) reports it; opening with `acceptingLoss` (`navd store repair --accept-loss`)
    /// keeps each session's changes up to the damage, says what was lost and sets the file aside.
    @Test func aFlippedByteInTheMiddleOfTheChangeLogIsRefusedUntilTheLossIsAccepted() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var ids: [String] = []
        var versions: [String: [Int]] = [:]
        do {
            let fixture = try Fixture(path: path, threshold: 100_000)
            for _ in 0..<3 { ids.append(try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id) }
            for step in 0..<60 {
                let id = ids[step % 3]
                let version = try fixture.navigate(id, (step / 3) % 2 == 0 ? Self.pathA : Self.pathB).session.state.version
                versions[id, default: []].append(version)
            }
            fixture.store.waitForCompaction()
        }
        let file = try #require(ChangeLog.files(prefix: path).last?.1)
        let scan = try #require(try ChangeLog.scan(prefix: path).last)
        #expect(scan.records.count == 60)
        // Record 30 (the 30th change: the third session's 10th) gets a flipped byte.
        let damaged = scan.offsets[29]
        let victim = scan.records[29]
        var bytes = try #require(FileManager.default.contents(atPath: file))
        bytes[damaged + 100] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: file))

        do {
            _ = try Fixture(path: path, threshold: 100_000)
            Issue.record("a damaged change log was accepted")
        } catch let error as StoreError {
            #expect(error.description.contains(file), "\(error)")
            #expect(error.description.contains("byte offset \(damaged)"), "\(error)")
            #expect(error.description.contains("navd store repair --store sqlite:\(path) --accept-loss"), "\(error)")
        }
        #expect(FileManager.default.contents(atPath: file) == bytes, "the damaged file is kept as it was")

        let (report, isDamaged) = try SQLiteStore.inspect(path: path)
        #expect(isDamaged)
        #expect(report.contains { $0.hasPrefix("DAMAGE: \(file) at byte offset \(damaged)") }, "\(report)")
        #expect(report.contains { $0.contains("byte offset \(damaged):") && $0.contains("records follow") }, "\(report)")

        let repaired = try Fixture(path: path, threshold: 100_000, acceptingLoss: true)
        let lines = repaired.store.recoveryReport
        // The victim's session keeps its changes before the damage; its later ones are named as lost.
        let kept = victim.version - 1
        #expect(lines.contains { $0.contains("session \(victim.sessionID): kept at version \(kept)") }, "\(lines)")
        #expect(lines.contains { $0.contains("change seq \(victim.seq) is missing") }, "\(lines)")
        #expect(try repaired.store.load(victim.sessionID)?.state.version == Int(kept))
        for id in ids where id != victim.sessionID {
            #expect(try repaired.store.load(id)?.state.version == versions[id]?.last, "untouched sessions keep every change")
        }
        let events = try repaired.allEvents(victim.sessionID).map(\.seq)
        #expect(events == Array(1...events.count), "no gap in the kept events")
        repaired.store.close()
        #expect(FileManager.default.fileExists(atPath: file + ".damaged"))
        #expect(!FileManager.default.fileExists(atPath: file))

        // It starts now, and the session goes on from the version it kept.
        let reopened = try Fixture(path: path, threshold: 100_000)
        let current = try #require(try reopened.store.load(victim.sessionID)).state.path.description
        let next = current == Fixture.canonicalA ? Self.pathB : Self.pathA
        #expect(try reopened.navigate(victim.sessionID, next).session.state.version == Int(kept) + 1)
        reopened.store.close()
        #expect(try SQLiteStore.inspect(path: path).damaged == false)
    }

    /// 4 KiB of garbage in the middle of the database: refused at start-up with a clear error,
    /// instead of answering 500 for some sessions and incomplete event lists for others.
    @Test func aDamagedDatabaseIsRefusedAtStart() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        do {
            let fixture = try Fixture(path: path, threshold: 50)
            for _ in 0..<200 {
                let id = try fixture.sessions.create(graph: nil, start: nil, context: ["note": .string(String(repeating: "x", count: 300))])
                    .session.id
                _ = try fixture.navigate(id, Self.pathA)
            }
            fixture.store.close()
        }
        var bytes = try #require(FileManager.default.contents(atPath: path))
        #expect(bytes.count > 64 * 4096)
        let middle = bytes.count / 2 / 4096 * 4096
        var generator = SplitMix64(seed: 7)
        for index in middle..<middle + 4096 { bytes[index] = UInt8(truncatingIfNeeded: generator.next()) }
        try bytes.write(to: URL(fileURLWithPath: path))
        do {
            _ = try Fixture(path: path, threshold: 50)
            Issue.record("a damaged database was accepted")
        } catch let error as StoreError {
            #expect(error.description.contains("the database \(path) cannot be used"), "\(error)")
            #expect(error.description.contains("quick_check") || error.description.contains("malformed"), "\(error)")
        }
        #expect(try SQLiteStore.inspect(path: path).damaged)
        // The check can be skipped (docs/operations.md, "Damage and full disks", says what it costs on a large file).
        #expect(try StoreFactory.SQLiteOptions("sqlite:\(path)?check=off")?.checkDatabase == false)
        #expect(try StoreFactory.SQLiteOptions("sqlite:\(path)")?.checkDatabase == true)
    }
}

extension SQLiteStoreTests {
    /// With a small cache, many sessions with large contexts keep the cache within its bound, and
    /// every session still reads back exactly — also one evicted while its newest change was only
    /// in the change log, not yet folded into the database — and takes further changes.
    @Test func aSmallCacheStaysWithinItsBoundAndEvictedSessionsReadBackExactly() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let limit = 400_000
        var ids: [String] = []
        var expected: [String: (version: Int, path: String, context: [String: JSONValue], events: [LifecycleEvent])] = [:]
        do {
            // A generation every 50 changes: of the 120 below, the last 20 are only in the log.
            let fixture = try Fixture(path: path, threshold: 50, cacheBytes: limit)
            for index in 0..<40 {
                let context: [String: JSONValue] = [
                    "user": .string("u\(index)"), "blob": .string(String(repeating: "\(index % 10)", count: 16_000))
                ]
                let created = try fixture.sessions.create(graph: nil, start: nil, context: context)
                ids.append(created.session.id)
                expected[created.session.id] = (1, created.session.state.path.description, context, created.events)
            }
            for round in 0..<3 {
                for id in ids {
                    let mutation = try fixture.navigate(id, round % 2 == 0 ? Self.pathA : Self.pathB)
                    // Each is a real change from the version before (a stale read would make it a no-op).
                    #expect(mutation.session.state.version == round + 2)
                    #expect(mutation.session.state.path.description == (round % 2 == 0 ? Fixture.canonicalA : "/top"))
                    expected[id]?.version = mutation.session.state.version
                    expected[id]?.path = mutation.session.state.path.description
                    expected[id]?.events += mutation.events
                    #expect(fixture.store.cacheUsage.bytes <= limit)
                }
            }
            #expect(fixture.store.cacheUsage.sessions < 20, "\(fixture.store.cacheUsage)")
            func check(_ id: String, _ note: String) throws {
                let entry = try #require(expected[id])
                let session = try #require(try fixture.store.load(id), "\(note)")
                #expect(session.state.version == entry.version, "\(note)")
                #expect(session.state.path.description == entry.path, "\(note)")
                #expect(session.state.context == entry.context, "\(note)")
                #expect(try fixture.allEvents(id) == entry.events, "\(note)")
                #expect(fixture.store.cacheUsage.bytes <= limit, "\(note)")
            }
            // The last-changed session's newest change is only in the log; read the others first,
            // so that it is evicted before it is read back.
            let newest = try #require(ids.last)
            for id in ids.dropLast() { try check(id, "read back") }
            #expect(!fixture.store.isCached(newest))
            #expect(expected[newest]?.version == 4)
            try check(newest, "evicted with its newest change only in the log")
            // It takes a change again (the compare-and-set works on an evicted session too).
            for id in ids.dropLast() { _ = try fixture.store.load(id) }
            #expect(!fixture.store.isCached(newest))
            let mutation = try fixture.navigate(newest, Self.pathB)
            #expect(mutation.session.state.version == (expected[newest]?.version ?? 0) + 1)
            expected[newest]?.version = mutation.session.state.version
            expected[newest]?.path = mutation.session.state.path.description
            expected[newest]?.events += mutation.events
            fixture.store.waitForCompaction()
        }
        // Dropped without close(): everything comes back from the database and the change log.
        let reopened = try Fixture(path: path, threshold: 50, cacheBytes: limit)
        for id in ids {
            let entry = try #require(expected[id])
            let session = try #require(try reopened.store.load(id))
            #expect(session.state.version == entry.version)
            #expect(session.state.context == entry.context)
            #expect(try reopened.allEvents(id) == entry.events)
        }
        #expect(reopened.store.cacheUsage.bytes <= limit)
        reopened.store.close()
    }
}

extension SQLiteStoreTests {
    /// Damage `PRAGMA quick_check` cannot see (valid pages, garbled text in a row) makes reading
    /// that session's events fail, instead of answering a silently shorter list.
    @Test func anEventBatchThatDoesNotReadBackIsAnErrorNotAShorterList() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var id = ""
        do {
            let fixture = try Fixture(path: path, threshold: 100)
            id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            _ = try fixture.navigate(id, Self.pathA)
            fixture.store.close()
        }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("UPDATE event_log SET body = '[{\"seq\":1,\"type\":\"transitionStart\"' WHERE first_seq = 1")
        connection.close()
        let fixture = try Fixture(path: path, threshold: 100)
        #expect(throws: StoreError.self) { try fixture.store.events(of: id, after: 0, limit: 100) }
        // The newer batch alone still reads.
        #expect(try fixture.store.events(of: id, after: 8, limit: 100).first?.seq == 9)
        fixture.store.close()
    }
}

extension SQLiteStoreTests {
    /// A stored graph version that no longer loads (a newer navd's stricter graph rules) is left
    /// out at start-up, with an error in the log. A session of that version then answers 422
    /// `unknown_graph`: reading it must not look the version up in the store while the store
    /// holds its own lock (that deadlocked the reading thread, and every later read with it).
    @Test func aSessionWhoseStoredGraphNoLongerLoadsIsRefusedNotDeadlocked() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let document = try JSONValue(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        func open() throws -> (Application, SQLiteStore) {
            let graphs = GraphRegistry()
            let store = try #require(
                try StoreFactory.open("sqlite:\(path)", graphs: graphs, connections: 1, logger: Logger(label: "test")) as? SQLiteStore
            )
            let application = Application(graphs: graphs, configuration: .init(), store: store, logger: Logger(label: "test"))
            try StoreFactory.restoreGraphs(from: store, into: graphs, logger: Logger(label: "test"))
            return (application, store)
        }
        let id: String
        do {
            let (application, store) = try open()
            _ = try application.graphs.add(document)
            id = try application.sessions.create(graph: "news", start: nil, context: [:]).session.id
            store.close()
        }
        // The stored document stops being a graph navd loads.
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute(#"UPDATE graphs SET document = '{"name": "news"}'"#)
            connection.close()
        }
        let (application, store) = try open()
        defer { store.close() }
        #expect(application.graphs.version("news", 1) == nil, "the damaged version is left out")

        let outcome = Locked<Result<StoredSession?, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            outcome.withLock { $0 = Result { () throws(StoreError) in try store.load(id) } }
            done.signal()
        }.start()
        try #require(done.wait(timeout: .now() + 10) == .success, "reading the session hung")
        switch outcome.withLock({ $0 }) {
        case .failure(let error): #expect(error.kind == .incompatible, "\(error)")
        default: Issue.record("expected an incompatible-session error, got \(String(describing: outcome.withLock { $0 }))")
        }
        // The store still serves.
        #expect(try store.count() == 1)
    }
}

/// Change log system calls whose next `fdatasync`, once armed, waits until the gate opens: a
/// slow disk under `sync=full`.
final class SlowSyncs: ChangeLogFiles {
    let armed = Atomic<Bool>(false)
    /// Signalled when an armed `fdatasync` starts waiting.
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)

    func pwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int {
        Glibc.pwrite(descriptor, bytes, count, offset)
    }

    func fdatasync(_ descriptor: Int32) -> Int32 {
        if armed.exchange(false, ordering: .relaxed) {
            entered.signal()
            gate.wait()
        }
        return Glibc.fdatasync(descriptor)
    }
}

extension SQLiteStoreTests {
    /// While one change waits for the disk (`sync=full`: its `fdatasync`), reads of cached
    /// sessions answer — another session's, and this one's at its version before the change,
    /// which is not acknowledged yet — and the change is read back once it is.
    @Test func aSlowAppendDoesNotStallReadsOfCachedSessions() throws {
        let folder = try TemporaryFolder()
        let files = SlowSyncs()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100, synchronousFull: true, files: files)
        defer { fixture.store.close() }
        let slow = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        let other = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        _ = try fixture.navigate(other, Self.pathA)

        files.armed.store(true, ordering: .relaxed)
        let written = Locked<Int?>(nil)
        let writer = DispatchSemaphore(value: 0)
        Thread {
            written.withLock { $0 = try? fixture.navigate(slow, Self.pathA).session.state.version }
            writer.signal()
        }.start()
        try #require(files.entered.wait(timeout: .now() + 10) == .success, "the change never reached fdatasync")

        let read = Locked<[Int?]>([])
        let reader = DispatchSemaphore(value: 0)
        Thread {
            let versions = [try? fixture.store.load(other)?.state.version, try? fixture.store.load(slow)?.state.version]
            read.withLock { $0 = versions }
            reader.signal()
        }.start()
        let answered = reader.wait(timeout: .now() + 5) == .success
        files.gate.signal()
        #expect(answered, "reads waited for another change's fdatasync")
        if !answered { reader.wait() }
        #expect(writer.wait(timeout: .now() + 10) == .success)
        #expect(read.withLock { $0 } == [2, 1])
        #expect(written.withLock { $0 } == 2)
        #expect(try fixture.store.load(slow)?.state.version == 2)
    }
}

extension SQLiteStoreTests {
    /// A delete while a change to the same session waits for the disk: the change is acknowledged
    /// (it was durable first), the delete wins after it, and the session stays deleted — the change
    /// published after the delete would bring it back into the cache.
    @Test func aDeleteDuringASlowAppendOfTheSameSessionStaysDeleted() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let files = SlowSyncs()
        let id: String
        do {
            let fixture = try Fixture(path: path, threshold: 100, synchronousFull: true, files: files)
            id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            files.armed.store(true, ordering: .relaxed)
            let written = Locked<Int?>(nil)
            let writer = DispatchSemaphore(value: 0)
            Thread {
                written.withLock { $0 = try? fixture.navigate(id, Self.pathA).session.state.version }
                writer.signal()
            }.start()
            try #require(files.entered.wait(timeout: .now() + 10) == .success, "the change never reached fdatasync")
            let deleted = Locked<Bool?>(nil)
            let deleter = DispatchSemaphore(value: 0)
            Thread {
                deleted.withLock { $0 = try? fixture.store.delete(id) }
                deleter.signal()
            }.start()
            // Give the delete time to remove the row and reach the cache.
            Thread.sleep(forTimeInterval: 0.2)
            files.gate.signal()
            #expect(writer.wait(timeout: .now() + 10) == .success)
            #expect(deleter.wait(timeout: .now() + 10) == .success)
            #expect(written.withLock { $0 } == 2)
            #expect(deleted.withLock { $0 } == true)
            #expect(try fixture.store.load(id) == nil)
            #expect(try fixture.allEvents(id).isEmpty)
            #expect(try fixture.store.count() == 0)
            fixture.store.close()
        }
        let reopened = try Fixture(path: path, threshold: 100)
        #expect(try reopened.store.load(id) == nil)
        reopened.store.close()
    }
}

extension SQLiteStoreTests {
    /// While the compactor folds a generation it holds the database connection in a write
    /// transaction. Reading a session the cache does not hold, and reading events (always from the
    /// database), must not wait for that: they answer from what is committed and what is logged.
    /// Here the test holds the connection as a fold does — a write transaction open, another
    /// session's row changed in it and not committed — for as long as the reads take.
    @Test func readsOfOtherSessionsDoNotWaitForAFoldInProgress() throws {
        let folder = try TemporaryFolder()
        // A cache of one entry: every read of a session not read last comes from the database.
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 4, cacheBytes: 1)
        defer { fixture.store.close() }
        let read = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        let other = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        var events = read.events
        // Four changes: a generation, folded into the tables; then one more only in the log.
        for step in 0..<5 {
            events += try fixture.navigate(read.session.id, step % 2 == 0 ? Self.pathA : Self.pathB).events
            if step == 3 { fixture.store.waitForCompaction() }
        }
        _ = try fixture.navigate(other, Self.pathA)
        #expect(!fixture.store.isCached(read.session.id))

        var reading: ReadElsewhere?
        try fixture.store.withWriter { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.statement("UPDATE sessions SET touched_at = touched_at + 1 WHERE id = ?").bind(1, other).run()
                reading = ReadElsewhere(fixture, read.session.id)
            }
        }
        let answers = try #require(reading)
        #expect(answers.inTime, "the reads waited for the fold's transaction")
        #expect(answers.version == 6)
        #expect(answers.events == events)
    }

    /// A read of a session and all its events on another thread, started while the test's thread
    /// holds what the read must not wait for: the initialiser returns when it has answered, or
    /// after 5 s; the answers are waited for.
    final class ReadElsewhere: Sendable {
        private let answers = Locked<(version: Int?, events: [LifecycleEvent]?)>((nil, nil))
        private let answered = DispatchSemaphore(value: 0)
        /// Whether it answered within the 5 s.
        let inTime: Bool

        init(_ fixture: Fixture, _ id: String) {
            let (answers, answered) = (answers, answered)
            Thread {
                let version = try? fixture.store.load(id)?.state.version
                let events = try? fixture.store.events(of: id, after: 0, limit: 1000)
                answers.withLock { $0 = (version, events) }
                answered.signal()
            }.start()
            inTime = answered.wait(timeout: .now() + 5) == .success
        }

        var version: Int? { result.version }
        var events: [LifecycleEvent]? { result.events }

        private var result: (version: Int?, events: [LifecycleEvent]?) {
            if !inTime {
                answered.wait()
                answered.signal()
            }
            return answers.withLock { $0 }
        }
    }

    /// A store whose compactor has just started folding one generation of `sessions` sessions'
    /// changes (the last change sealed it), with no cache to speak of: the sessions' ids and when
    /// the generation was sealed.
    static func foldInProgress(in folder: TemporaryFolder, sessions: Int) throws -> (Fixture, [String], ContinuousClock.Instant) {
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: sessions, cacheBytes: 1)
        var ids: [String] = []
        for _ in 0..<sessions { ids.append(try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id) }
        for id in ids { _ = try fixture.navigate(id, pathA) }
        return (fixture, ids, ContinuousClock.now)
    }

    /// Runs `operation` over and over on a thread of its own until the fold `foldInProgress`
    /// started (at `sealed`) is done: the fold's duration, how long each run that started in the
    /// fold's first half took (sorted; however late the thread learned of the fold's end), and
    /// what went wrong (`operation`'s complaints and errors).
    static func repeatedDuringFold(
        _ fixture: Fixture, sealed: ContinuousClock.Instant, _ operation: @escaping @Sendable (_ run: Int) throws -> String?
    ) -> (fold: Duration, during: [Duration], failures: [String]) {
        let clock = ContinuousClock()
        let folding = Atomic<Bool>(true)
        let runs = Locked<[(start: ContinuousClock.Instant, took: Duration)]>([])
        let failures = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            var run = 0
            while folding.load(ordering: .acquiring) {
                let start = clock.now
                do {
                    if let failure = try operation(run) { failures.withLock { $0.append(failure) } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                runs.withLock { $0.append((start, clock.now - start)) }
                run += 1
            }
            done.signal()
        }.start()
        fixture.store.waitForCompaction()
        let fold = clock.now - sealed
        folding.store(false, ordering: .releasing)
        done.wait()
        let during = runs.withLock { $0 }.filter { $0.start < sealed + fold / 2 }.map(\.took).sorted()
        return (fold, during, failures.withLock { $0 })
    }

    /// The same with a real fold: many sessions' changes pending, folded in one generation, while
    /// another thread reads two of those sessions (the cache holds neither) and their events. A read
    /// that starts in the fold's first half and waits for it takes more than half the fold; none
    /// may. (A bound on the longest read, not the median: reads started before the compactor
    /// thread took the connection are quick either way.) Prints the fold's duration and the reads'
    /// latencies (BENCHMARKS.md, "SQLite during a fold").
    @Test func readsDuringALargeFoldTakeAFractionOfIt() throws {
        let folder = try TemporaryFolder()
        let (fixture, ids, sealed) = try Self.foldInProgress(in: folder, sessions: 4000)
        defer { fixture.store.close() }
        let sessions = ids.count
        let readers = Array(ids.prefix(2))
        let (fold, during, failures) = Self.repeatedDuringFold(fixture, sealed: sealed) { run in
            let id = readers[run % 2]
            let version = try fixture.store.load(id)?.state.version
            let events = try fixture.store.events(of: id, after: 0, limit: 1000)
            if version == 2, !events.isEmpty, events.map(\.seq) == Array(1...events.count) { return nil }
            return "\(id): version \(String(describing: version)), events \(events.map(\.seq))"
        }
        let median = during.isEmpty ? Duration.zero : during[during.count / 2]
        let longest = during.last ?? fold
        print(
            "fold of \(sessions) sessions' changes: \(fold); reads started in its first half (a session and its events): \(during.count), "
                + "median \(median), max \(longest)"
        )
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(fold > .milliseconds(50), "the fold was too quick to tell")
        #expect(!during.isEmpty, "no read started in the fold's first half")
        #expect(longest < fold / 2, "a read waited for the fold")
    }
}

extension SQLiteStoreTests {
    /// Creates and deletes need the writing connection, which a fold takes one chunk of sessions at
    /// a time: during a fold of 4,000 sessions' changes, another thread creates a session and
    /// deletes it, over and over, and none of them waits for the fold's first half (each waits
    /// for a chunk at most). Every created session reads back, and every deleted one is gone.
    @Test func createsAndDeletesDuringALargeFoldWaitForOneChunkAtMost() throws {
        let folder = try TemporaryFolder()
        let (fixture, ids, sealed) = try Self.foldInProgress(in: folder, sessions: 4000)
        defer { fixture.store.close() }
        let sessions = ids.count
        let (fold, during, failures) = Self.repeatedDuringFold(fixture, sealed: sealed) { _ in
            let id = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            if try fixture.store.load(id)?.state.version != 1 { return "\(id) did not read back" }
            if try !fixture.store.delete(id) || fixture.store.load(id) != nil { return "\(id) was not deleted" }
            return nil
        }
        let longest = during.last ?? fold
        print(
            "fold of \(sessions) sessions' changes: \(fold); create, read and delete started in its first half: \(during.count), "
                + "median \(during.isEmpty ? .zero : during[during.count / 2]), max \(longest)"
        )
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(fold > .milliseconds(50), "the fold was too quick to tell")
        #expect(during.count > 1, "no create started in the fold's first half")
        #expect(longest < fold / 2, "a create or a delete waited for the fold")
        for id in ids.prefix(50) { #expect(try fixture.store.load(id)?.state.version == 2) }
    }

    /// A crash between two chunks of a fold leaves some sessions' changes in the tables while the
    /// generation is not recorded as compacted: start-up folds it all again, and each event batch
    /// is stored once (reads hide a repeated batch, so the table itself is counted).
    @Test func aFoldCutShortBetweenChunksIsFoldedOnceAtStartUp() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var expected: [String: [LifecycleEvent]] = [:]
        do {
            let fixture = try Fixture(path: path, threshold: 1000)
            for _ in 0..<6 {
                let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
                let id = created.session.id
                expected[id] = created.events
                for step in 0..<3 { expected[id, default: []] += try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB).events }
            }
            // No close(): the changes stay in the log, as if the process had died.
            fixture.store.waitForCompaction()
        }
        // The first chunk of the fold, as the compactor writes it, and then the crash.
        var folds: [String: SQLiteStore.Fold] = [:]
        for record in try ChangeLog.read(prefix: path).records { SQLiteStore.fold(record, into: &folds, retainedEvents: 1000) }
        let firstChunk = folds.sorted { $0.key < $1.key }.prefix(3)
        do {
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            try SQLiteStore.write(firstChunk, through: nil, connection, retainedEvents: 1000, repeating: false)
        }
        let batchesBefore = try SQLiteSchemaTests.rows("event_log", at: path).count
        let reopened = try Fixture(path: path, threshold: 1000)
        defer { reopened.store.close() }
        for (id, events) in expected {
            #expect(try reopened.store.load(id)?.state.version == 4)
            #expect(try reopened.allEvents(id) == events)
        }
        // Each session: its creation's batch and one of its three logged changes.
        let batches = try SQLiteSchemaTests.rows("event_log", at: path)
        #expect(batchesBefore == 6 + 3)
        #expect(batches.count == 6 * 2, "\(batches.count) batches")
    }
}

extension SQLiteStoreTests {
    /// With a cache of one session, every read comes from the row and the log while changes are
    /// appended and the compactor folds a generation every few of them: a read never answers a
    /// version older than one acknowledged before it started, nor misses or repeats an event.
    @Test func uncachedReadsDuringCompactionsSeeEveryAcknowledgedChange() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 5, cacheBytes: 1)
        defer { fixture.store.close() }
        let threads = 3
        let steps = 80
        var ids: [String] = []
        for _ in 0..<threads { ids.append(try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id) }
        // Per session: the newest acknowledged version and event seq.
        let acknowledged = Locked<[String: (version: Int, seq: Int)]>([:])
        for id in ids { acknowledged.withLock { $0[id] = (1, 0) } }
        let failures = Locked<[String]>([])
        let sessionIDs = ids
        DispatchQueue.concurrentPerform(iterations: threads * 2) { worker in
            let id = sessionIDs[worker % threads]
            if worker < threads {
                for step in 0..<steps {
                    do {
                        let mutation = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB)
                        let seq = mutation.events.last?.seq ?? 0
                        acknowledged.withLock { $0[id] = (mutation.session.state.version, seq) }
                    } catch {
                        failures.withLock { $0.append("write \(id) step \(step): \(error)") }
                    }
                }
            } else {
                for _ in 0..<steps {
                    let before = acknowledged.withLock { $0[id] } ?? (version: 1, seq: 0)
                    do {
                        let version = try fixture.store.load(id)?.state.version ?? 0
                        let seqs = try fixture.allEvents(id).map(\.seq)
                        if version < before.version {
                            failures.withLock { $0.append("\(id): read version \(version) after \(before.version) was acknowledged") }
                        }
                        if (seqs.last ?? 0) < before.seq || seqs != Array((seqs.first ?? 1)..<((seqs.first ?? 1) + seqs.count)) {
                            failures.withLock {
                                $0.append(
                                    "\(id): events \(seqs.first ?? 0)…\(seqs.last ?? 0) (\(seqs.count)) after seq \(before.seq) was acknowledged"
                                )
                            }
                        }
                    } catch {
                        failures.withLock { $0.append("read \(id): \(error)") }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        for id in ids { #expect(try fixture.store.load(id)?.state.version == steps + 1) }
    }
}

extension SQLiteStoreTests {
    /// Between a fold's commit and the moment the compactor takes its generation out of the log, a
    /// session's changes are in both: a read then takes each event once, and the newest version.
    /// (The compactor is held there: it waits for the append lock, which this test holds.)
    @Test func aReadBetweenAFoldsCommitAndItsEndTakesEachEventOnce() throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 2, cacheBytes: 1)
        defer { fixture.store.close() }
        let read = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        let other = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        var events = read.events
        // The compactor waits for the gate; the second change seals the generation.
        let gate = DispatchSemaphore(value: 0)
        fixture.store.compactor.async { gate.wait() }
        events += try fixture.navigate(read.session.id, Self.pathA).events
        events += try fixture.navigate(read.session.id, Self.pathB).events
        _ = try fixture.navigate(other, Self.pathA)
        #expect(!fixture.store.isCached(read.session.id))

        var committed = false
        var reading: ReadElsewhere?
        try fixture.store.appending { _ throws(StoreError) in
            gate.signal()
            // The fold commits, then waits for the append lock to take the generation out of the log.
            for _ in 0..<500 where !committed {
                committed = try fixture.store.withReader { reader throws(StoreError) -> Bool in
                    let statement = try reader.statement("SELECT value FROM store_meta WHERE key = 'compacted_seq'")
                    defer { statement.reset() }
                    return try statement.step() && statement.int(0) == 2
                }
                if !committed { usleep(10_000) }
            }
            reading = ReadElsewhere(fixture, read.session.id)
        }
        #expect(committed, "the fold did not commit")
        let answers = try #require(reading)
        #expect(answers.inTime, "the reads waited for the fold")
        #expect(answers.version == 3)
        #expect(answers.events == events)
        fixture.store.waitForCompaction()
        #expect(try fixture.allEvents(read.session.id) == events)
    }
}
