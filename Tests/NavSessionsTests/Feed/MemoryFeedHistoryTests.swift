import Testing

@testable import NavSessions
@testable import NavTestSupport

/// A session's history on the memory store is read through its own record positions, kept as
/// records are appended, swept and purged: every page equals a filter of the whole feed.
@Suite struct MemoryFeedHistoryTests {
    /// What a pass over every record held answers: the reference the positions must agree with.
    private static func expected(_ feed: MemoryFeed, _ id: String, after version: Int, limit: Int) -> [String] {
        let held = feed.page(from: .oldest, limit: .max, form: .full).entries
        return held.filter { $0.session == id && $0.version > version }.prefix(limit).map(name)
    }

    private static func name(_ entry: FeedEntry) -> String {
        "\(entry.session):\(entry.isEnd ? "end" : String(entry.version))"
    }

    private static func checkEveryPage(_ feed: MemoryFeed, sessions: Set<String>) {
        for id in sessions.sorted() + ["no-such-session"] {
            for after in 0...8 {
                for limit in [1, 2, 5, 100] {
                    let answer = feed.history(of: id, after: after, limit: limit).map(name)
                    #expect(answer == expected(feed, id, after: after, limit: limit), "session \(id) after \(after) limit \(limit)")
                }
            }
        }
    }

    @Test func pagesAgreeWithTheWholeFeedAfterSweepsAndPurges() throws {
        let store = MemoryStore()
        let clock = Locked<Int64>(0)
        try TrafficJourneys.write(try TrafficJourneys.service(store, clock: clock), store, clock: clock)
        var feed = MemoryFeed()
        for record in store.feedRecords { feed.append(record) }
        let sessions = Set(store.feedRecords.map(\.session))
        #expect(sessions.count > 1)
        Self.checkEveryPage(feed, sessions: sessions)
        // The sweep takes the oldest records, of several sessions, from the front.
        #expect(feed.sweep(olderThan: store.feedRecords[5].time, maxBytes: .max) == 5)
        Self.checkEveryPage(feed, sessions: sessions)
        // A purge leaves holes: the purged session has no history, the others theirs.
        let purged = try #require(feed.records.last?.record.session)
        #expect(feed.purge(.session(purged)) > 0)
        #expect(feed.history(of: purged, after: 0, limit: 100).isEmpty)
        Self.checkEveryPage(feed, sessions: sessions)
        // Records appended after a purge are found too.
        for record in store.feedRecords where record.session == purged { feed.append(record) }
        #expect(!feed.history(of: purged, after: 0, limit: 100).isEmpty)
        #expect(feed.positionsKept == feed.count)
        // Swept to nothing, nothing of them is kept.
        let held = feed.count
        #expect(feed.sweep(olderThan: .max, maxBytes: .max) == held)
        #expect(feed.positionsKept == 0)
        Self.checkEveryPage(feed, sessions: sessions)
    }
}
