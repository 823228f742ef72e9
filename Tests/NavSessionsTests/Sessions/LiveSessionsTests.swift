import Foundation
import Synchronization
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// The heartbeat (docs/design.md, "Live sessions"): every watcher is pinged once an interval, a slice of them at a time
/// rather than all together (BENCHMARKS.md, "Live sessions").
@Suite struct LiveSessionsTests {
    /// A watcher that counts its pings and the moments they came.
    final class Counting: SessionWatcher {
        let pings = Atomic<Int>(0)

        func receive(_ change: LiveChange) {}
        func refresh() {}
        func end(_ reason: EndReason) {}
        func ping() { pings.add(1, ordering: .relaxed) }
    }

    @Test func everyWatcherIsPingedOnceAnIntervalASliceAtATime() throws {
        let live = LiveSessions()
        let watchers = (0..<400).map { _ in Counting() }
        for (index, watcher) in watchers.enumerated() { try live.add(watcher, to: "s\(index % 50)") }
        func counts() -> [Int] { watchers.map { $0.pings.load(ordering: .relaxed) } }
        live.startHeartbeat(every: 1.6)
        defer { live.stopHeartbeat() }
        // A slice every 100 ms: the first pings reach a sixteenth of the watchers, not all of them.
        var first: [Int] = []
        for _ in 0..<1000 where first.allSatisfy({ $0 == 0 }) {
            Thread.sleep(forTimeInterval: 0.002)
            first = counts()
        }
        #expect(first.contains { $0 > 0 })
        #expect(first.filter { $0 > 0 }.count < watchers.count / 2)
        // Within about an interval every watcher has had its ping; the slices go round in turn,
        // so no watcher is ever more than one ping ahead of another.
        var now = first
        for _ in 0..<500 where now.contains(0) {
            Thread.sleep(forTimeInterval: 0.01)
            now = counts()
        }
        #expect(!now.contains(0))
        #expect((now.max() ?? 0) - (now.min() ?? 0) <= 1)
    }

    @Test func watchersAreSpreadOverTheSlices() {
        let watchers = (0..<1600).map { _ in Counting() }
        var perSlice = [Int](repeating: 0, count: LiveSessions.heartbeatSlices)
        for watcher in watchers {
            let slice = LiveSessions.heartbeatSlice(of: watcher)
            #expect((0..<LiveSessions.heartbeatSlices).contains(slice))
            perSlice[slice] += 1
        }
        // 100 a slice on average; none holds a large share, whatever the allocator's layout.
        #expect(perSlice.max() ?? 0 < 400)
        #expect(perSlice.filter { $0 > 0 }.count >= LiveSessions.heartbeatSlices / 2)
    }
}
