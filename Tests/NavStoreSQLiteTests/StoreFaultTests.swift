import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavAPI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the disk cannot take — a change-log append, a compaction, an SQLite commit failing
/// with `ENOSPC` or `EIO` — answer 503 `store_unavailable`, lose nothing acknowledged, leave no
/// half-applied change behind, and the store recovers by itself once it can write again.
///
/// Failures are injected in-process: the change log's `pwrite`/`fdatasync` through its
/// ``ChangeLogFiles`` seam, SQLite's writes through its VFS's system-call hook (``SQLiteFaults``).
/// `FullDiskTests` fills a real tmpfs under a running daemon.
@Suite struct StoreFaultTests {
    typealias Fixture = SQLiteStoreTests.Fixture
    static let pathA = SQLiteStoreTests.pathA
    static let pathB = SQLiteStoreTests.pathB

    /// Runs `body`, expecting the 503 a client gets when the store cannot write.
    static func expectUnavailable(_ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("\(what) succeeded on a store that cannot write", sourceLocation: sourceLocation)
        } catch {
            // As the daemon answers it: the server's error through the one mapping to the wire.
            let error = APIError(answering: error)
            #expect(error.code == .storeUnavailable, "\(what): \(error.code) \(error.detail)", sourceLocation: sourceLocation)
            let response = error.response
            #expect(response.status == 503, sourceLocation: sourceLocation)
            #expect(response.headers.contains { $0.0 == "Retry-After" && $0.1 == "1" }, sourceLocation: sourceLocation)
        }
    }

    /// Polls `isAvailable()` (which probes the disk while it is failing) for up to 5 s.
    static func waitUntilAvailable(_ store: SQLiteStore) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if store.isAvailable() { return true }
            usleep(100_000)
        }
        return false
    }

    static func path(_ session: StoredSession?) -> String? { session?.state.path.description }

    @Test(arguments: [(ENOSPC, false), (EIO, false), (ENOSPC, true), (EIO, true)])
    func aFailedChangeLogAppendIs503ChangesNothingAndHeals(code: Int32, failSync: Bool) throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let faults = ChangeLogFaults()
        var id = ""
        var events: [LifecycleEvent] = []
        do {
            let fixture = try Fixture(path: path, threshold: 100, synchronousFull: failSync, files: faults)
            let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
            id = created.session.id
            _ = try fixture.navigate(id, Self.pathA)
            events = try fixture.allEvents(id)
            #expect(fixture.store.isAvailable())

            if failSync { faults.failSyncs(code) } else { faults.failWrites(code) }
            Self.expectUnavailable("navigate") { _ = try fixture.navigate(id, Self.pathB) }
            Self.expectUnavailable("navigate again") { _ = try fixture.navigate(id, Self.pathB) }
            // Nothing of the failed change is visible: not in the cache, not in the events.
            let session = try #require(try fixture.store.load(id))
            #expect(session.state.version == 2)
            #expect(Self.path(session) == SQLiteStoreTests.Fixture.canonicalA)
            #expect(try fixture.allEvents(id) == events)
            #expect(!fixture.store.isAvailable())

            faults.heal()
            #expect(Self.waitUntilAvailable(fixture.store))
            let mutation = try fixture.navigate(id, Self.pathB)
            #expect(mutation.session.state.version == 3)
            #expect(mutation.events.first?.seq == (events.last?.seq ?? 0) + 1, "events stay gapless")
            events += mutation.events
            #expect(try fixture.allEvents(id) == events)
            fixture.store.waitForCompaction()
        }
        // Dropped without close(): what was acknowledged comes back from the change log.
        let reopened = try Fixture(path: path, threshold: 100)
        #expect(try reopened.store.load(id)?.state.version == 3)
        #expect(try reopened.allEvents(id) == events)
        reopened.store.close()
    }

    @Test(arguments: [ENOSPC, EIO])
    func aFailedSQLiteCommitIs503ChangesNothingAndHeals(code: Int32) throws {
        #expect(!SQLiteFaults.installed.isEmpty, "SQLite's VFS lets no write call be replaced")
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100)
        let keptSession = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        let kept = keptSession.session.id
        let owner = Credentials(bearer: Token.digest(keptSession.token))
        _ = try fixture.navigate(kept, Self.pathA)  // only in the change log

        SQLiteFaults.fail(under: folder.path, with: code)
        defer { SQLiteFaults.heal(folder.path) }
        Self.expectUnavailable("create") { _ = try fixture.sessions.create(graph: nil, start: nil, context: [:]) }
        Self.expectUnavailable("delete") { try fixture.sessions.delete(kept, credentials: owner, ifMatch: nil) }
        #expect(try fixture.store.count() == 1)
        // The failed delete kept the session and its logged change.
        #expect(try fixture.store.load(kept)?.state.version == 2)
        #expect(!fixture.store.isAvailable())

        SQLiteFaults.heal(folder.path)
        #expect(Self.waitUntilAvailable(fixture.store))
        let created = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
        #expect(try fixture.store.count() == 2)
        #expect(try fixture.store.load(created)?.state.version == 1)
        fixture.store.close()
    }

    @Test(arguments: [ENOSPC, EIO])
    func aFailedCompactionLosesNothingAndIsRetried(code: Int32) throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        var expected: [String: (version: Int, events: [LifecycleEvent])] = [:]
        do {
            // A generation every 4 changes: the 24 below seal several while SQLite cannot write.
            let fixture = try Fixture(path: path, threshold: 4)
            var ids: [String] = []
            for _ in 0..<3 {
                let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
                ids.append(created.session.id)
                expected[created.session.id] = (1, created.events)
            }
            SQLiteFaults.fail(under: folder.path, with: code)
            defer { SQLiteFaults.heal(folder.path) }
            for step in 0..<24 {
                let id = ids[step % 3]
                // The change log still takes changes: they are acknowledged.
                let mutation = try fixture.navigate(id, step % 2 == 0 ? Self.pathA : Self.pathB)
                expected[id]?.version = mutation.session.state.version
                expected[id]?.events += mutation.events
            }
            fixture.store.waitForCompaction()
            #expect(!fixture.store.isAvailable(), "a compaction the disk could not take shows in readiness")
            for id in ids {
                #expect(try fixture.store.load(id)?.state.version == expected[id]?.version)
                #expect(try fixture.allEvents(id) == expected[id]?.events)
            }
            Self.expectUnavailable("list (folds the log in)") {
                _ = try fixture.sessions.storeCall { () throws(StoreError) in try fixture.store.list(limit: 10) }
            }

            SQLiteFaults.heal(folder.path)
            #expect(Self.waitUntilAvailable(fixture.store))
            // The retried compaction catches up: listing folds everything in and succeeds.
            #expect(try fixture.store.list(limit: 10).count == 3)
            for id in ids { #expect(try fixture.allEvents(id) == expected[id]?.events) }
            fixture.store.waitForCompaction()
        }
        let reopened = try Fixture(path: path, threshold: 4)
        for (id, entry) in expected {
            #expect(try reopened.store.load(id)?.state.version == entry.version)
            #expect(try reopened.allEvents(id) == entry.events)
        }
        reopened.store.close()
    }

    /// A graph upload the disk cannot take is 503 like any other write, shows in readiness, and
    /// takes the next version once the disk heals (no number is used up by the failed one).
    @Test(arguments: [ENOSPC, EIO])
    func aFailedGraphUploadIs503AndShowsInReadiness(code: Int32) throws {
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 100)
        let graphs = GraphRegistry()
        graphs.attach(fixture.store)
        let news = try JSONValue(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        #expect(try graphs.add(news).0.version == 1)
        guard case .object(var changed) = news else {
            Issue.record("news.json is not an object")
            return
        }
        changed["start"] = .string("/top/list_news")

        SQLiteFaults.fail(under: folder.path, with: code)
        defer { SQLiteFaults.heal(folder.path) }
        Self.expectUnavailable("a graph upload") { _ = try graphs.add(.object(changed)) }
        #expect(!fixture.store.isAvailable(), "a graph the disk could not take shows in readiness")

        SQLiteFaults.heal(folder.path)
        #expect(Self.waitUntilAvailable(fixture.store))
        #expect(try graphs.add(.object(changed)).0.version == 2)
        fixture.store.close()
    }
}
