import Foundation
import Logging
import Synchronization
import Testing

@testable import NavHTTP
@testable import NavTestSupport

/// A request that arrives just as its deadline passes is either answered or dropped unseen,
/// never both: the watchdog and the connection's thread settle it with one compare-and-swap.
@Suite struct DeadlineRaceTests {
    static func tracked(_ deadlines: RequestDeadlines) -> (RequestDeadlines.Tracked, UnsafeMutableRawPointer) {
        let pointer = deadlines.register(socket: -1)
        return (Unmanaged<RequestDeadlines.Tracked>.fromOpaque(pointer).takeUnretainedValue(), pointer)
    }

    @Test func anExpiredConnectionIsNotAnswered() {
        let deadlines = RequestDeadlines(seconds: 1, logger: Logger(label: "test"))
        let (tracked, pointer) = Self.tracked(deadlines)
        defer { deadlines.unregister(pointer) }
        let since = tracked.since.load(ordering: .relaxed)
        #expect(!tracked.expire(now: since + 1000, limit: 1000), "not overdue yet")
        #expect(tracked.expire(now: since + 1001, limit: 1000))
        #expect(!tracked.answering(), "the watchdog won: the request must not reach the handler")
        #expect(!tracked.expire(now: since + 5000, limit: 1000), "shut once")
    }

    @Test func aConnectionBeingAnsweredIsNotExpired() {
        let deadlines = RequestDeadlines(seconds: 1, logger: Logger(label: "test"))
        let (tracked, pointer) = Self.tracked(deadlines)
        defer { deadlines.unregister(pointer) }
        let since = tracked.since.load(ordering: .relaxed)
        #expect(tracked.answering())
        #expect(!tracked.expire(now: since + 60_000, limit: 1000))
        #expect(tracked.answering())
        // The answer went out: the clock runs again for the next request.
        tracked.awaitRequest()
        let next = tracked.since.load(ordering: .relaxed)
        #expect(next >= since)
        #expect(tracked.expire(now: next + 1001, limit: 1000))
    }

    @Test func exactlyOneSideWinsARace() {
        let deadlines = RequestDeadlines(seconds: 1, logger: Logger(label: "test"))
        for _ in 0..<2000 {
            let (tracked, pointer) = Self.tracked(deadlines)
            let since = tracked.since.load(ordering: .relaxed)
            let answered = Atomic<Bool>(false)
            let expired = Atomic<Bool>(false)
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    answered.store(tracked.answering(), ordering: .relaxed)
                } else {
                    expired.store(tracked.expire(now: since + 2000, limit: 1000), ordering: .relaxed)
                }
            }
            let wasAnswered = answered.load(ordering: .relaxed)
            let wasExpired = expired.load(ordering: .relaxed)
            #expect(wasAnswered != wasExpired)
            deadlines.unregister(pointer)
        }
    }
}
