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
