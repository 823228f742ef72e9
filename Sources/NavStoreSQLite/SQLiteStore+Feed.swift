import NavCore
import NavSessions

// TRANSITIONAL: the feed is not written by this store yet. These forward to the store's writes
// without their records, and the reads find nothing; replaced by the store's own feed.
extension SQLiteStore {
    package func insert(_ session: StoredSession, events: [LifecycleEvent], keeping answer: KeptAnswer?, record: FeedRecord?)
        throws(StoreError) -> Bool
    {
        try insert(session, events: events, keeping: answer)
    }

    package func update(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8], keeping answer: KeptAnswer?,
        record: FeedRecord?
    ) throws(StoreError) -> Bool {
        try update(session, expectedVersion: expectedVersion, events: events, eventsJSON: eventsJSON, keeping: answer)
    }

    package func delete(_ id: String, record: FeedRecord?) throws(StoreError) -> Bool {
        try delete(id)
    }

    package func deleteExpired(touchedBefore cutoff: Int64, ending: (@Sendable (StoredSession) -> FeedRecord)?) throws(StoreError)
        -> [String]
    {
        try deleteExpired(touchedBefore: cutoff)
    }

    package func feed(from start: FeedStart, limit: Int, form: FeedForm) throws(StoreError) -> FeedPage {
        FeedPage(entries: [], next: FeedCursor.start)
    }

    package func feedFloor() throws(StoreError) -> FeedCursor { .start }

    package func history(of id: String, after version: Int, limit: Int) throws(StoreError) -> [FeedEntry] { [] }

    package func purgeFeed(_ purge: FeedPurge) throws(StoreError) -> Int { 0 }

    package func sweepFeed(olderThan cutoff: Int64, maxBytes: Int) throws(StoreError) -> Int { 0 }

    package func feedUsage() -> (records: Int, bytes: Int) { (0, 0) }
}
