import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// A past version is rebuilt from the nearest checkpoint below it (docs/design.md, "History"),
/// so no answer replays more than ``SessionService/checkpointInterval`` changes.
@Suite struct CheckpointTests {
    @Test func aLateVersionOfALongHistoryReplaysAtMostOneIntervalOfChanges() throws {
        let fixture = try FeedRecordTests.Fixture()
        let session = try fixture.create()
        let interval = SessionService.checkpointInterval
        var answers: [Int: [UInt8]] = [:]
        for index in 0..<(3 * interval + 10) {
            let path = index % 2 == 0 ? "^/top/list_news(category=\(index))" : "^/top/help"
            try fixture.sessions.apply(.intent(.navigate(path)), to: session.id, credentials: session.owner, ifMatch: nil) { mutation in
                answers[mutation.session.state.version] = fixture.sessions.view(of: mutation.session)
            }
        }
        let current = try #require(answers.keys.max())
        for version in [current - 1, 3 * interval - 1, 2 * interval + 1, interval + 5] {
            let before = fixture.sessions.checkpoints.changesReplayed
            let past = try fixture.sessions.view(of: session.id, credentials: session.owner, at: version)
            let replayed = fixture.sessions.checkpoints.changesReplayed - before
            #expect(replayed <= interval, "version \(version): \(replayed) changes replayed")
            #expect(past.bytes == answers[version], "version \(version)")
        }
        // With no checkpoint (another process's, or one forgotten), the creation record is the base.
        fixture.sessions.checkpoints.forget(nil)
        let rebuilt = try fixture.sessions.view(of: session.id, credentials: session.owner, at: 2 * interval + 3)
        #expect(rebuilt.bytes == answers[2 * interval + 3])
    }

    /// The checkpoints a process keeps are bounded by their bytes, not only by their count: a
    /// client that fills its screens' state makes snapshots of many KB each, and kept 16,384 at a
    /// time they would hold gigabytes. They stay within an eighth of `--max-feed-bytes`, the oldest
    /// going first, and past versions still read (replayed from further back).
    @Test func checkpointsKeptInMemoryStayWithinTheirBytes() throws {
        let fixture = try FeedRecordTests.Fixture(maxFeedBytes: 512 << 10)
        let budget = FeedSettings.checkpointBytes(forFeedBytes: 512 << 10)
        let session = try fixture.create(["user": "u1"], start: "/top/profile")
        try fixture.apply(.navigate("edit_profile"), session)
        let form = try #require(try fixture.sessions.store.load(session.id)?.state.top?.id)
        let interval = SessionService.checkpointInterval
        var answers: [Int: [UInt8]] = [:]
        let checked = [4 * interval, interval + 5]
        for index in 0..<(4 * interval) {
            // 30 KB of state once, then small changes: small records, snapshots of 30 KB each.
            let patch: JSONValue = index == 0 ? ["note": .string(String(repeating: "n", count: 30_000))] : ["count": .int(index)]
            try fixture.sessions.apply(
                .intent(.patchState(screen: form, patch: patch)), to: session.id, credentials: session.owner, ifMatch: nil
            ) {
                mutation in
                if checked.contains(mutation.session.state.version) {
                    answers[mutation.session.state.version] = fixture.sessions.view(of: mutation.session)
                }
            }
        }
        let usage = fixture.sessions.checkpoints.usage
        #expect(usage.bytes <= budget, "\(usage.count) checkpoints of \(usage.bytes) bytes against \(budget)")
        #expect(usage.count >= 1 && usage.count < 4, "\(usage.count) checkpoints kept")
        for version in checked {
            let past = try fixture.sessions.view(of: session.id, credentials: session.owner, at: version)
            #expect(past.bytes == answers[version], "version \(version)")
        }
        #expect(fixture.sessions.checkpoints.usage.bytes <= budget)
        fixture.sessions.checkpoints.forget(session.id)
        #expect(fixture.sessions.checkpoints.usage == (0, 0))
    }

    /// Checkpoints forgotten with their sessions (ended, purged) leave no trace: the order of
    /// keeping stays within twice the limit however many sessions come and go, and the kept ones
    /// are not evicted for the forgotten ones' sake.
    @Test func forgottenCheckpointsLeaveNoTrace() {
        let snapshot = Array(repeating: UInt8(ascii: " "), count: 100)
        let checkpoints = HistoryCheckpoints(limit: 4, maxBytes: 1 << 20)
        checkpoints.keep("kept", version: 64, graphVersion: 1, snapshot: snapshot)
        for index in 0..<1000 {
            checkpoints.keep("gone-\(index)", version: 64, graphVersion: 1, snapshot: snapshot)
            checkpoints.forget("gone-\(index)")
        }
        #expect(checkpoints.ordered <= 8)
        #expect(checkpoints.usage == (1, 100))
        #expect(checkpoints.base(of: "kept", below: 65)?.version == 64)
    }

    /// Checkpoints are bounded by bytes, so a session of large snapshots keeps few, and its past
    /// versions may lie thousands of changes from one: such a read is not replayed at any cost.
    /// A replay longer than one interval takes a slot of heavy work (503 while none is free, so
    /// replays never hold every request thread); one longer than `maxReplay` changes is 410.
    @Test func aLongReplayTakesASlotOfHeavyWorkAndATooLongOneIsRefused() throws {
        let heavy = Budget(resource: "graph_work", limit: 1)
        let fixture = try FeedRecordTests.Fixture(heavyWork: heavy)
        let session = try fixture.create()
        for index in 0..<(SessionService.maxReplay + 100) {
            try fixture.apply(.navigate(index % 2 == 0 ? "^/top/list_news(category=\(index))" : "^/top/help"), session)
        }
        func view(_ version: Int) throws(ServiceError) -> Int {
            try fixture.sessions.view(of: session.id, credentials: session.owner, at: version).version
        }
        // What a session of large snapshots comes to: no checkpoint kept.
        fixture.sessions.checkpoints.forget(session.id)
        #expect(heavy.acquire())
        #expect(try view(50) == 50)
        #expect { try view(500) } throws: { ($0 as? ServiceError)?.code == .overCapacity && ($0 as? ServiceError)?.retryAfter == 1 }
        heavy.release()
        #expect(try view(500) == 500)
        #expect(heavy.used == 0)
        fixture.sessions.checkpoints.forget(session.id)
        let far = SessionService.maxReplay + 50
        #expect { try view(far) } throws: { ($0 as? ServiceError)?.code == .versionExpired && ($0 as? ServiceError)?.param == "version" }
        #expect(heavy.used == 0)
        // With the checkpoints a replay keeps on its way, the same version is near enough.
        #expect(try view(2000) == 2000)
        #expect(try view(far) == far)
    }

    /// A snapshot may hold more values than a client's document may (1,000,000: 31 screens of
    /// 32,000 tiny values each): a checkpoint of one is decoded with a snapshot's bounds, as a
    /// store reads a session, and is a base; read with a request's, it failed, and every read of
    /// such a session replayed from its creation.
    @Test func aCheckpointOfMoreValuesThanARequestMayHoldIsABase() throws {
        let fixture = try FeedRecordTests.Fixture()
        let session = try fixture.create()
        let path = "/top" + String(repeating: "/help", count: 30)
        try fixture.apply(.navigate(path), session)
        let screens = try #require(try fixture.sessions.store.load(session.id)).state.screens.map(\.id)
        let tiny = JSONValue.array(Array(repeating: .int(0), count: 32_000))
        for screen in screens { try fixture.apply(.patchState(screen: screen, patch: ["a": tiny]), session) }
        let top = try #require(screens.last)
        var version = try #require(try fixture.sessions.store.load(session.id)).state.version
        while version < SessionService.checkpointInterval + 3 {
            try fixture.apply(.patchState(screen: top, patch: ["n": .int(version)]), session)
            version += 1
        }
        let before = fixture.sessions.checkpoints.changesReplayed
        let past = try fixture.sessions.view(of: session.id, credentials: session.owner, at: SessionService.checkpointInterval + 2)
        #expect(past.version == SessionService.checkpointInterval + 2)
        #expect(fixture.sessions.checkpoints.changesReplayed - before == 2, "replayed from the checkpoint at 64")
    }

    /// Not a bound, a measurement: how long a past version of a 1,000-version history takes to
    /// rebuild on the memory store (printed; docs/design.md, "History", has the figure).
    @Test func aPastVersionOfAThousandVersionHistoryIsRebuiltQuickly() throws {
        let fixture = try FeedRecordTests.Fixture()
        let session = try fixture.create()
        for index in 0..<999 {
            let path = index % 2 == 0 ? "^/top/list_news(category=\(index))" : "^/top/help"
            try fixture.sessions.apply(.intent(.navigate(path)), to: session.id, credentials: session.owner, ifMatch: nil) { _ in }
        }
        var worst = Duration.zero
        let clock = ContinuousClock()
        for version in stride(from: 999, to: 500, by: -37) {
            let elapsed = try clock.measure { _ = try fixture.sessions.view(of: session.id, credentials: session.owner, at: version) }
            worst = max(worst, elapsed)
        }
        print("history: worst past version of 1,000 (memory store, debug build): \(worst)")
    }
}
