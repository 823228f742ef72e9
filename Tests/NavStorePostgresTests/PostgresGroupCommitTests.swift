import Foundation
import NavCore
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStorePostgres
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Group commit (docs/design.md, "PostgreSQL"): the hand-over of the lead between waiting changes, and how a group
/// whose connection broke finds out which of its changes committed.
@Suite struct PostgresGroupCommitTests {
    /// Many threads commit at once through one leader slot: each gets its own outcome, groups
    /// form (fewer runs than changes), none is larger than the bound, and at most `leaders` run at once.
    @Test func waitingChangesAreCommittedTogetherAndEachGetsItsOwnOutcome() {
        let commits = PostgresGroupCommit<Int, Int>(leaders: 2)
        let running = Locked((now: 0, most: 0, groups: [[Int]]()))
        let outcomes = Locked([Int: Int]())
        let group = DispatchGroup()
        for thread in 0..<24 {
            group.enter()
            Thread {
                for step in 0..<20 {
                    let write = thread * 100 + step
                    let outcome = commits.commit(write) { writes in
                        running.withLock {
                            $0.now += 1
                            $0.most = max($0.most, $0.now)
                            $0.groups.append(writes)
                        }
                        usleep(2_000)
                        running.withLock { $0.now -= 1 }
                        return writes.map { -$0 }
                    }
                    outcomes.withLock { $0[write] = outcome }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let result = running.withLock { $0 }
        #expect(outcomes.withLock { $0 }.count == 480)
        #expect(outcomes.withLock { $0 }.allSatisfy { $0.value == -$0.key })
        #expect(result.most <= 2)
        #expect(result.groups.count < 480, "no two changes went together")
        #expect(result.groups.allSatisfy { $0.count <= PostgresGroupCommit<Int, Int>.maxGroup })
        #expect(result.groups.flatMap { $0 }.sorted() == outcomes.withLock { $0 }.keys.sorted())
        #expect(commits.changes.load(ordering: .relaxed) == 480)
        #expect(commits.groups.load(ordering: .relaxed) == result.groups.count)
    }

    /// A change alone (nobody waiting, no other group committing) is committed at once: an idle
    /// daemon's writes do not pay the gathering wait. A thousand in a row take far less than the
    /// 300 ms a wait each would.
    @Test func aLoneChangeIsNotHeldToGatherOthers() {
        let commits = PostgresGroupCommit<Int, Int>(leaders: 4)
        let started = ContinuousClock.now
        for write in 0..<1000 {
            #expect(commits.commit(write) { writes in writes.map { -$0 } } == -write)
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .microseconds(Int(PostgresGroupCommit<Int, Int>.gatherMicroseconds) * 500), "\(elapsed)")
        #expect(commits.groups.load(ordering: .relaxed) == 1000)
    }

    /// The notices of many groups go out together: every entry once, in payloads under
    /// PostgreSQL's limit that start with the prefix, far fewer payloads than groups; close sends
    /// what is left.
    @Test func noticesOfManyGroupsAreSentTogether() {
        let sent = Locked([String]())
        let notifier = PostgresNotifier(prefix: "tag changes") { payload in sent.withLock { $0.append(payload) } }
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                for step in 0..<250 {
                    notifier.post([" \(String(repeating: "a", count: 24))\(thread * 1000 + step):\(step)"])
                }
                group.leave()
            }.start()
        }
        group.wait()
        notifier.close()
        let payloads = sent.withLock { $0 }
        #expect(payloads.allSatisfy { $0.hasPrefix("tag changes ") && $0.utf8.count <= PostgresNotifier.payloadBytes })
        let entries = payloads.flatMap { $0.dropFirst("tag changes".count).split(separator: " ") }
        #expect(entries.count == 2000)
        #expect(Set(entries).count == 2000)
        #expect(payloads.count < 2000 / 4, "\(payloads.count) payloads for 2,000 posts")
    }

    /// A session's changes within one second leave `touched_at` as it was (rounded up to the
    /// second), so PostgreSQL updates its row in place (HOT: no index entries, room kept by the
    /// fillfactor); the stored time is never earlier than the change's, so nothing expires early.
    @Test(.needsPostgres) func changesWithinASecondUpdateTheRowInPlace() throws {
        #expect(PostgresStore.coarseTouchedAt(5_000) == 5_000)
        #expect(PostgresStore.coarseTouchedAt(5_001) == 6_000)
        #expect(PostgresStore.coarseTouchedAt(5_999) == 6_000)
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let graphs = try TestFixtures.graphs()
        let store = try PostgresStore(url: cluster.url, connections: 1, decode: StoreFactory.snapshotDecoder(graphs))
        let navigator = try #require(try graphs.latest("news")).navigator
        var (session, events) = try TestFixtures.session(SessionService.newID(), in: graphs)
        try store.insert(session, events: events)
        for step in 0..<20 {
            let expected = session.state.version
            let outcome = try navigator.apply(.navigate(step % 2 == 0 ? "^/top/list_news(category=\(step))" : "^/top"), to: session.state)
            session.state = outcome.state
            session.touchedAt = 7_000_001 + Int64(step * 10)
            events = outcome.events
            #expect(try store.update(session, expectedVersion: expected, events: events, eventsJSON: events.jsonBytes))
        }
        // Closing ends the store's backend, which hands its statistics over as it exits.
        store.close()
        #expect(try cluster.query("SELECT touched_at FROM sessions WHERE id = '\(session.id)'") == "7001000")
        var inPlace = 0
        for _ in 0..<50 where inPlace < 19 {
            inPlace = Int(try cluster.query("SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'sessions'")) ?? 0
            usleep(100_000)
        }
        // The first change moves touched_at from the creation's exact time: every other is in place.
        #expect(inPlace >= 19, "\(inPlace) of 20 updates in place")
    }

    /// After a broken connection, a change that committed reads back as written — also when the
    /// session has moved on since (its last event is in the log) — and one that did not as failed.
    @Test(.needsPostgres) func aGroupWhoseConnectionBrokeReadsBackWhatCommitted() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let graphs = try TestFixtures.graphs()
        let store = try PostgresStore(url: cluster.url, connections: 1, decode: StoreFactory.snapshotDecoder(graphs))
        defer { store.close() }
        let navigator = try #require(try graphs.latest("news")).navigator
        let (session, events) = try TestFixtures.session(SessionService.newID(), in: graphs)
        try store.insert(session, events: events)

        func change(_ from: StoredSession, _ path: String, at time: Int64) throws -> (StoredSession, [LifecycleEvent]) {
            var next = from
            let outcome = try navigator.apply(.navigate(path), to: from.state)
            next.state = outcome.state
            next.touchedAt = time
            return (next, outcome.events)
        }
        let (second, secondEvents) = try change(session, "^/top/list_news(category=1)", at: 2)
        let committed = store.groupWrite(second, expectedVersion: 1, events: secondEvents, eventsJSON: secondEvents.jsonBytes, keeping: nil)
        #expect(try store.update(second, expectedVersion: 1, events: secondEvents, eventsJSON: secondEvents.jsonBytes))
        let (never, neverEvents) = try change(second, "^/top/list_news(category=2)", at: 3)
        let lost = store.groupWrite(never, expectedVersion: 2, events: neverEvents, eventsJSON: neverEvents.jsonBytes, keeping: nil)

        let broken = StoreError(message: "the connection broke", kind: .unavailable)
        let outcomes = try store.pool.with { connection throws(StoreError) in store.recover([committed, lost], broken, on: connection) }
        #expect(outcomes.map(Self.label) == ["written", "failed unavailable"])

        // Another change lands after the first: the first still reads back, from the log.
        let (third, thirdEvents) = try change(second, "^/top", at: 4)
        #expect(try store.update(third, expectedVersion: 2, events: thirdEvents, eventsJSON: thirdEvents.jsonBytes))
        let again = try store.pool.with { connection throws(StoreError) in store.recover([committed], broken, on: connection) }
        #expect(again.map(Self.label) == ["written"])
    }

    /// A change's events are one row of the log, trimmed whole when a change crosses a multiple
    /// of 64 seqs: reads still show exactly the retained events, in pages, none twice.
    @Test(.needsPostgres) func theEventLogShowsTheRetainedEventsOfItsBatches() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let graphs = try TestFixtures.graphs()
        let store = try PostgresStore(url: cluster.url, connections: 1, retainedEvents: 20, decode: StoreFactory.snapshotDecoder(graphs))
        defer { store.close() }
        let navigator = try #require(try graphs.latest("news")).navigator
        var (session, events) = try TestFixtures.session(SessionService.newID(), in: graphs)
        try store.insert(session, events: events)
        var all = events
        for step in 0..<40 {
            let outcome = try navigator.apply(.navigate(step % 2 == 0 ? NewsPaths.pathA : NewsPaths.pathB), to: session.state)
            var next = session
            next.state = outcome.state
            #expect(
                try store.update(next, expectedVersion: session.state.version, events: outcome.events, eventsJSON: outcome.events.jsonBytes)
            )
            session = next
            all += outcome.events
        }
        let newest = session.state.eventCounter
        #expect(all.last?.seq == newest)
        let retained = all.filter { $0.seq > newest - 20 }
        #expect(try store.events(of: session.id, after: 0, limit: 1000) == retained)
        // Pages of 7 from the start and from the middle of a batch.
        var paged: [LifecycleEvent] = []
        while true {
            let page = try store.events(of: session.id, after: paged.last?.seq ?? 0, limit: 7)
            #expect(page.count <= 7)
            if page.isEmpty { break }
            paged += page
        }
        #expect(paged == retained)
        #expect(try store.events(of: session.id, after: newest - 3, limit: 1000) == Array(all.suffix(3)))
        // Older batches are gone from the table, not only hidden.
        let rows = Int(try cluster.query("SELECT count(*) FROM event_log WHERE session_id = '\(session.id)'")) ?? 0
        #expect(rows < 41)
    }

    static func label(_ outcome: PostgresStore.GroupOutcome) -> String {
        switch outcome {
        case .written: "written"
        case .lost: "lost"
        case .failed(let error): "failed \(error.kind == .unavailable ? "unavailable" : "failure")"
        }
    }
}
