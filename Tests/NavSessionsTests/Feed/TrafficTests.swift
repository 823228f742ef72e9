import NavJSON
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// Traffic and funnels on the memory store, and the funnel's counting on its own
/// (docs/design.md, "Traffic and funnels").
@Suite struct TrafficTests {
    @Test func theMemoryStoreCountsTheJourneys() throws {
        let store = MemoryStore()
        let clock = Locked<Int64>(0)
        let sessions = try TrafficJourneys.service(store, clock: clock)
        try TrafficJourneys.write(sessions, store, clock: clock)
        try TrafficJourneys.check(store, against: store)
    }

    /// A record is a view when its visible top is another screen: creation included, params not.
    @Test func aRecordKeepsItsView() throws {
        let store = MemoryStore()
        let clock = Locked<Int64>(0)
        let sessions = try TrafficJourneys.service(store, clock: clock)
        try TrafficJourneys.write(sessions, store, clock: clock)
        let records = store.feedRecords
        let views = records.map { record in record.toScene.map { ($0, record.fromScene ?? "-") } }
        #expect(views.count == 13)
        #expect(views.compactMap { $0?.0 }.count == 11)
        #expect(views[0]?.0 == "top" && views[0]?.1 == "-")
        #expect(views[2] == nil, "params changed: no view")
        for record in records where record.toScene != nil {
            #expect(FeedRecord.view(fromFull: record.full)?.to == record.toScene)
            #expect(FeedRecord.view(fromFull: record.full)?.from == record.fromScene)
        }
        #expect(records.last?.isEnd == true && records.last?.toScene == nil)
    }

    /// The memory store reads its feed for traffic a chunk at a time under its lock: chunks after
    /// one another see every record once, in order, from the oldest retained.
    @Test func aScanInChunksSeesEveryRecordOnce() throws {
        let store = MemoryStore()
        let clock = Locked<Int64>(0)
        try TrafficJourneys.write(try TrafficJourneys.service(store, clock: clock), store, clock: clock)
        var feed = MemoryFeed()
        for record in store.feedRecords { feed.append(record) }
        func scanAll(_ feed: MemoryFeed) -> [String] {
            var ids: [String] = []
            var cursor = FeedCursor.start
            while let last = feed.scan(after: cursor, limit: 2, { ids.append($0.id) }) { cursor = last }
            return ids
        }
        #expect(scanAll(feed) == store.feedRecords.map(\.id))
        #expect(feed.scan(after: FeedCursor(position: feed.lastPosition), limit: 2) { _ in } == nil)
        let cutoff = store.feedRecords[4].time
        #expect(feed.sweep(olderThan: cutoff, maxBytes: .max) == 4)
        #expect(scanAll(feed) == store.feedRecords.dropFirst(4).map(\.id))
    }

    @Test func aFunnelContinuesFromTheLatestViewOfTheStepBefore() {
        var counter = FunnelCounter(steps: ["a", "b", "c"], within: 10)
        // s1: a at 0, a again at 100, b at 105 (within of the second a), c at 120 (too late).
        for (time, scene) in [(0, "a"), (100, "a"), (105, "b"), (120, "c")] { counter.add(session: "s1", time: Int64(time), scene: scene) }
        // s2: b before any a counts for nothing; then a, b, c each within 10.
        for (time, scene) in [(0, "b"), (1, "a"), (5, "b"), (15, "c")] { counter.add(session: "s2", time: Int64(time), scene: scene) }
        // s3: never a.
        counter.add(session: "s3", time: 0, scene: "c")
        #expect(counter.counts == [2, 2, 1])
        // One view advances one step only, even for a scene named twice.
        var twice = FunnelCounter(steps: ["a", "a"], within: 10)
        twice.add(session: "s", time: 0, scene: "a")
        #expect(twice.counts == [1, 0])
        twice.add(session: "s", time: 10, scene: "a")
        #expect(twice.counts == [1, 1])
    }
}
