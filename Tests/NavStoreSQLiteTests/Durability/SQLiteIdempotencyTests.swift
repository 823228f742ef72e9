import Foundation
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// `Idempotency-Key`s kept by the SQLite store (docs/design.md, "Idempotency"): a client retries most often
/// when it got no answer, and it got none most often because navd went away. So a retry after a
/// crash or a restart replays the first answer instead of applying twice: a change's answer is
/// in the change log record that made the change durable, a create's in the transaction that
/// inserted its session.
@Suite struct SQLiteIdempotencyTests {
    @Test func aRetryAfterACrashOrARestartReplaysTheFirstAnswer() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        var daemon = try DaemonHarness(store: store)
        let createKey = ["Idempotency-Key": "create-\(UUID().uuidString)"]
        let session = try daemon.createSession(headers: createKey)
        let changeKey = ["Idempotency-Key": "change-\(UUID().uuidString)"]
        let first = try daemon.navigate(session, "list_news/show_news(id=3)", headers: changeKey)
        #expect(first.status == 200)

        // Killed before any compaction: both answers are only where the change and the session are.
        daemon.crash()
        daemon = try DaemonHarness(store: store)
        let change = try daemon.navigate(session, "list_news/show_news(id=3)", headers: changeKey)
        #expect(change.headers["idempotent-replayed"] == "true", "\(change)")
        #expect(change.headers["etag"] == first.headers["etag"])
        #expect(try change.json() == (try first.json()))
        let create = try daemon.send("POST", "/v1/sessions", json: [:], headers: createKey)
        #expect(create.status == 201)
        #expect(create.headers["idempotent-replayed"] == "true", "\(create)")
        #expect(try create.json()["id"]?.string == session.id)
        #expect(try create.json()["token"]?.string == session.token)
        #expect(try daemon.view(session)["version"]?.int == 2, "nothing applied twice")
        // The key with another request is still refused.
        #expect(try daemon.navigate(session, "^/top", headers: changeKey).code == "idempotency_key_reused")

        // A clean stop folds everything into the database: the answers are in its table now.
        let back = try daemon.send("POST", session.url + "/back", json: [:], token: session.token, headers: ["Idempotency-Key": "back-1"])
        #expect(back.status == 200)
        #expect(try daemon.stop() == 0)
        daemon = try DaemonHarness(store: store)
        let backAgain = try daemon.send(
            "POST", session.url + "/back", json: [:], token: session.token, headers: ["Idempotency-Key": "back-1"])
        #expect(backAgain.headers["idempotent-replayed"] == "true", "\(backAgain)")
        #expect(try backAgain.json() == (try back.json()))
        #expect(try daemon.navigate(session, "list_news/show_news(id=3)", headers: changeKey).headers["idempotent-replayed"] == "true")
        #expect(try daemon.view(session)["version"]?.int == 3)

        // Deleting the session forgets its answers: a create retried after it makes a new session.
        #expect(try daemon.send("DELETE", session.url, token: session.token).status == 204)
        #expect(try daemon.stop() == 0)
        daemon = try DaemonHarness(store: store)
        let recreated = try daemon.send("POST", "/v1/sessions", json: [:], headers: createKey)
        #expect(recreated.status == 201 && recreated.headers["idempotent-replayed"] == nil, "\(recreated)")
        #expect(try recreated.json()["id"]?.string != session.id)
        #expect(try daemon.stop() == 0)
    }

    /// The store itself: a change's answer is found in the change log before compaction and in
    /// the table after (folded in at start-up after a crash); the sweep deletes a change's answer
    /// once older than the TTL, and a create's with its session.
    @Test func answersAreFoundBeforeAndAfterCompactionAndSweptWithTheTTL() throws {
        typealias Fixture = SQLiteStoreTests.Fixture
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let clock = Locked(Int64(1_700_000_000_000))
        let now: @Sendable () -> Int64 = { clock.withLock { $0 } }
        func answer(_ key: String, _ session: String) -> KeptAnswer {
            KeptAnswer(
                key: key, session: session, fingerprint: Array(repeating: 7, count: 32), status: 200, headers: [("ETag", "\"2\"")],
                body: Array("{}".utf8))
        }
        var ids: [String] = []
        do {
            let fixture = try Fixture(path: path, threshold: 3, now: now)
            for index in 0..<2 {
                let created = try #require(
                    try fixture.sessions.create(
                        graph: nil, start: nil, context: [:], credentials: Credentials(bearer: nil),
                        keeping: { answer("create k\(index)", $0.session.id) }))
                ids.append(created.session.id)
            }
            #expect(try fixture.store.keptAnswer("create k0")?.session == ids[0])
            // Kept when its session was made (the service's answer carries no time of its own).
            #expect(try fixture.store.keptAnswer("create k0")?.createdAt == (try fixture.store.load(ids[0]))?.createdAt)
            // The same key again writes no session.
            #expect(
                try fixture.sessions.create(
                    graph: nil, start: nil, context: [:], credentials: Credentials(bearer: nil),
                    keeping: { answer("create k0", $0.session.id) }) == nil)
            #expect(try fixture.store.count() == 2)
            // A change kept as the service keeps it: in the change's record (one change: no fold yet).
            let session = try #require(try fixture.store.load(ids[1]))
            var changed = session
            changed.state.version += 1
            #expect(
                try fixture.store.update(
                    changed, expectedVersion: session.state.version, events: [], eventsJSON: Array("[]".utf8),
                    keeping: answer("\(ids[1]) d1", ids[1])))
            #expect(try fixture.store.keptAnswer("\(ids[1]) d1")?.createdAt == changed.touchedAt)
            #expect(try fixture.store.keptAnswer("\(ids[1]) other") == nil)
            // Dropped without close(), as by `kill -9`.
            fixture.store.waitForCompaction()
        }
        do {
            let fixture = try Fixture(path: path, threshold: 3, now: now)
            #expect(try fixture.store.keptAnswer("\(ids[1]) d1")?.body == Array("{}".utf8), "folded in at start-up")
            // A day later, the second session is touched again, the first is not.
            clock.withLock { $0 += 86_400_000 }
            _ = try fixture.navigate(ids[1], SQLiteStoreTests.pathA)
            var current = try #require(try fixture.store.load(ids[1]))
            #expect(try Self.change(&current, in: fixture.store, keeping: "\(ids[1]) d2", body: Array("{}".utf8)))
            #expect(try fixture.store.deleteExpired(touchedBefore: now() - 1000).map(\.id) == [ids[0]])
            #expect(try fixture.store.keptAnswer("create k0") == nil, "with its session")
            #expect(try fixture.store.keptAnswer("\(ids[1]) d1") == nil, "older than the cutoff")
            #expect(try fixture.store.keptAnswer("\(ids[1]) d2")?.createdAt == current.touchedAt, "newer than the cutoff")
            #expect(try fixture.store.keptAnswer("create k1")?.session == ids[1], "its session lives")
            fixture.store.close()
        }
    }

    /// A key used again once its change's answer is older than the session TTL (not replayed any
    /// more, but not swept yet) applies anew and keeps the new answer: the store answers the
    /// newest one, from the log and, once compacted, from the table alike — a compaction must not
    /// bring the old answer back (a retry of the new request after a restart would apply it again).
    @Test func aKeyKeptAgainAnswersTheNewestBeforeAndAfterCompaction() throws {
        let folder = try TemporaryFolder()
        let fixture = try SQLiteStoreTests.Fixture(path: "\(folder.path)/navd.db", threshold: 1000)
        var session = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session
        let key = "\(session.id) again"
        for body in ["first", "second"] {
            #expect(try Self.change(&session, in: fixture.store, keeping: key, body: Array(body.utf8)))
            #expect(try fixture.store.keptAnswer(key)?.body == Array(body.utf8), "from the log")
            // A listing folds every logged change into the tables first.
            _ = try fixture.store.list(limit: 1)
            #expect(try fixture.store.keptAnswer(key)?.body == Array(body.utf8), "from the table")
        }
        fixture.store.close()
    }

    /// An answer is a whole session view, held in memory until its change is folded: changes sent
    /// with fresh keys start a new generation once their answers take `answerBytesPerGeneration`,
    /// however few changes that is, so what the log holds in memory stays bounded; every answer
    /// is still found, in the log or the table.
    @Test func answersWaitingToBeFoldedAreBoundedByTheirBytes() throws {
        typealias Fixture = SQLiteStoreTests.Fixture
        let folder = try TemporaryFolder()
        let fixture = try Fixture(path: "\(folder.path)/navd.db", threshold: 1000, answerBytes: 20_000)
        var session = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session
        var keys: [String] = []
        for index in 0..<40 {
            let key = "\(session.id) k\(index)"
            #expect(try Self.change(&session, in: fixture.store, keeping: key, body: Array(repeating: 0x78, count: 4096)))
            keys.append(key)
            fixture.store.waitForCompaction()
            let held = fixture.store.withPublished {
                (($0.compacting?.folds.values.flatMap(\.answers.values) ?? []) + $0.pending.values.flatMap(\.answers.values)).reduce(0) {
                    $0 + $1.body.count
                }
            }
            #expect(held <= 20_000 + 4096, "after \(index + 1) changes")
        }
        for key in keys { #expect(try fixture.store.keptAnswer(key)?.body.count == 4096, "\(key)") }
        fixture.store.close()

        // However many changes `&compact=N` lets a generation hold (any positive Int), the answers'
        // bound still seals it, and working out whether the database is behind does not overflow.
        let unbounded = try Fixture(path: "\(folder.path)/unbounded.db", threshold: Int.max, answerBytes: 20_000)
        session = try unbounded.sessions.create(graph: nil, start: nil, context: [:]).session
        for index in 0..<8 {
            #expect(
                try Self.change(
                    &session, in: unbounded.store, keeping: "\(session.id) u\(index)", body: Array(repeating: 0x78, count: 4096)))
        }
        unbounded.store.waitForCompaction()
        #expect(unbounded.store.statistics().compactions ?? 0 >= 1)
        unbounded.store.close()
    }

    /// Writes `session`'s next version, keeping `body` under `key` as a change's answer (the
    /// service's part is not needed here), and moves `session` on to it. - Returns: whether it was written.
    static func change(_ session: inout StoredSession, in store: SQLiteStore, keeping key: String, body: [UInt8]) throws -> Bool {
        var changed = session
        changed.state.version += 1
        let answer = KeptAnswer(key: key, session: session.id, fingerprint: [], status: 200, headers: [], body: body)
        guard try store.update(changed, expectedVersion: session.state.version, events: [], eventsJSON: Array("[]".utf8), keeping: answer)
        else {
            return false
        }
        session = changed
        return true
    }

    /// A keyed change that changed nothing (a navigation to where the session is) writes no
    /// change for its answer to ride on; its answer is kept all the same, so a retry after a
    /// crash gets it again, as the same process would answer it, instead of navigating back
    /// from where another client has moved the session since.
    @Test func aKeyedNoOpRetriedAfterACrashReplaysInsteadOfNavigating() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        var daemon = try DaemonHarness(store: store)
        let session = try daemon.createSession()
        let key = ["Idempotency-Key": "no-op-\(UUID().uuidString)"]
        let first = try daemon.navigate(session, "^/top", headers: key)
        #expect(first.status == 200 && first.headers["etag"] == "\"1\"", "\(first)")
        #expect(try daemon.navigate(session, "list_news").status == 200)
        daemon.crash()
        daemon = try DaemonHarness(store: store)
        let retry = try daemon.navigate(session, "^/top", headers: key)
        #expect(retry.headers["idempotent-replayed"] == "true", "\(retry)")
        #expect(try retry.json() == (try first.json()))
        #expect(try daemon.view(session)["version"]?.int == 2, "not navigated back")
        #expect(try daemon.stop() == 0)
    }
}
