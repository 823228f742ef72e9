import NavCore
import Testing

@testable import navd

/// The packed event log gives back exactly the events put in, and keeps the newest.
@Suite struct EventLogTests {
    static func events(from first: Int, count: Int) -> [LifecycleEvent] {
        (first..<(first + count)).map { seq in
            switch seq % 4 {
            case 0: LifecycleEvent(seq: seq, type: .transitionStart, transition: seq / 4, from: "/top/list_news(category=\(seq))", to: "/tøp!/é")
            case 1: LifecycleEvent(seq: seq, type: .awake, screen: "e\(seq)", scene: "show_news", transition: seq / 4)
            case 2: LifecycleEvent(seq: seq, type: .stateChanged, screen: "e\(seq * 1000)", scene: "", transition: 300)
            default: LifecycleEvent(seq: seq, type: .transitionEnd, transition: seq / 4, from: "", to: "/top")
            }
        }
    }

    @Test func roundTripsEveryField() {
        let original = Self.events(from: 1, count: 40)
        let log = EventLog(original)
        #expect(log.count == 40)
        #expect(log.events(after: 0, limit: 1000) == original)
        #expect(log.events(after: 10, limit: 5) == Array(original[10..<15]))
        #expect(log.events(after: 40, limit: 10).isEmpty)
    }

    @Test(arguments: LifecycleEvent.Kind.allCases)
    func roundTripsEveryKind(_ kind: LifecycleEvent.Kind) {
        let event = LifecycleEvent(seq: 7, type: kind, screen: "e3", scene: "top", transition: 2)
        #expect(EventLog([event]).events(after: 0, limit: 10) == [event])
    }

    @Test func keepsTheNewestWhenTrimmed() {
        var log = EventLog()
        for batch in 0..<50 {
            log.append(Self.events(from: batch * 9 + 1, count: 9))
            log.retain(100)
            #expect(log.count <= 125)
        }
        let kept = log.events(after: 0, limit: 1000)
        #expect(kept.last?.seq == 450)
        #expect(kept.map(\.seq) == Array((451 - kept.count)...450))
        #expect(kept.count >= 100)
    }
}
