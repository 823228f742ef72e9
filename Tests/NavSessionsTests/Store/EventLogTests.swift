import NavCore
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// The packed event log gives back exactly the events put in, and keeps the newest.
@Suite struct EventLogTests {
    static func events(from first: Int, count: Int) -> [LifecycleEvent] {
        (first..<(first + count)).map { seq in
            switch seq % 4 {
            case 0:
                LifecycleEvent(
                    seq: seq, type: .transitionStart, transition: seq / 4, from: "/top/list_news(category=\(seq))", to: "/tøp!/é")
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

    /// The documented layout written one byte at a time, as `EventLog` wrote it before it wrote
    /// whole batches through a pointer.
    static func reference(_ events: [LifecycleEvent]) -> [UInt8] {
        var bytes: [UInt8] = []
        func number(_ value: Int) {
            var value = UInt64(max(0, value))
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
        for event in events {
            bytes.append(UInt8(LifecycleEvent.Kind.allCases.firstIndex(of: event.type) ?? 0))
            let texts = [event.screen, event.scene, event.from, event.to]
            bytes.append(texts.enumerated().reduce(0) { flags, text in text.element == nil ? flags : flags | 1 << text.offset })
            number(event.seq)
            number(event.transition)
            for case let text? in texts {
                number(text.utf8.count)
                bytes.append(contentsOf: Array(text.utf8))
            }
        }
        return bytes
    }

    @Test func writesTheDocumentedLayout() {
        let texts: [String?] = [nil, "", "e1", "show_news", "/tøp!/é(x=\"\\\n)", String(repeating: "long/", count: 40) + "日本"]
        let events = LifecycleEvent.everyShape(
            texts: texts, seqs: [0, 1, 127, 128, 16_384, 1 << 35, Int.max - 16, -4], transitions: [0, 300, -1, 1 << 21]
        )
        let whole = EventLog(events)
        #expect(whole.bytes == Self.reference(events))
        #expect(whole.count == events.count)
        var batched = EventLog()
        for start in stride(from: 0, to: events.count, by: 7) {
            batched.append(Array(events[start..<min(start + 7, events.count)]))
        }
        batched.append([])
        #expect(batched.bytes == whole.bytes)
        #expect(batched.count == events.count)
        let clamped = events.map { event in
            var event = event
            event.seq = max(0, event.seq)
            event.transition = max(0, event.transition)
            return event
        }
        #expect(whole.events(after: -1, limit: 10_000) == clamped)
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
