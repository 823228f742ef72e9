import Synchronization

/// What a store keeps of the feed (docs/design.md, "Navigation analytics"): the records its
/// session writes carry (``SessionStore/update(_:expectedVersion:events:eventsJSON:keeping:record:)``
/// and the others) read back in cursor order, a session's own records, purges and the sweep.
package protocol FeedStore: Sendable {
    /// Up to `limit` records from `start` in cursor order, in `form`. Per session they come in
    /// version order; a reader that pages on with ``FeedPage/next`` reads each record once,
    /// including records whose writes commit out of cursor order (PostgreSQL with several
    /// processes: only records below every write still running are handed out).
    /// - Throws: nothing for a cursor older than what is retained: see ``feedFloor()``.
    func feed(from start: FeedStart, limit: Int, form: FeedForm) throws(StoreError) -> FeedPage

    /// The cursor at or below which records have been swept: a reader's `after` below it may
    /// have missed records (410 `cursor_expired`). ``FeedCursor/start`` when none were.
    func feedFloor() throws(StoreError) -> FeedCursor

    /// Whether `cursor` may have been handed out by this feed: in this store's form, and at or
    /// below the newest cursor a reader can have been given (a record's, or an empty page's
    /// `next`), whether or not its record was purged or swept since; ``FeedCursor/start`` always.
    /// A cursor above it was never given (or belongs to another store, or to a memory store's
    /// earlier run): 400, rather than an empty page forever.
    func feedGave(_ cursor: FeedCursor) throws(StoreError) -> Bool

    /// Session `id`'s retained records with a version above `after`, oldest first, at most
    /// `limit`, in the full form: its history.
    func history(of id: String, after version: Int, limit: Int) throws(StoreError) -> [FeedEntry]

    /// Removes the records `purge` names. - Returns: how many.
    func purgeFeed(_ purge: FeedPurge) throws(StoreError) -> Int

    /// Removes records older than `cutoff` (ms since the epoch), and then the oldest until the
    /// rest take at most `maxBytes` (``FeedRecord/cost``). - Returns: how many.
    func sweepFeed(olderThan cutoff: Int64, maxBytes: Int) throws(StoreError) -> Int

    /// The records retained and the bytes they take, for `/metrics` (the budget `feed_bytes`).
    func feedUsage() -> (records: Int, bytes: Int)

    /// Whether a write takes its record's place in the feed before the record is durable, so
    /// that no record written after it is handed out until the write ends (SQLite): a write that
    /// ends without a record then lets those through, and the feed's watchers must be told.
    var holdsBackLaterRecords: Bool { get }

    /// The views of `graph` (every version) at times in `range` (ms since the epoch), by scene
    /// and by edge (``FeedTraffic``), from what the store keeps beside each record
    /// (``FeedRecord/toScene``, ``FeedRecord/fromScene``): no record's JSON is read.
    func traffic(graph: String, in range: Range<Int64>) throws(StoreError) -> FeedTraffic

    /// The sessions that reached each step of `query` (``FunnelCounter``), from the views of its
    /// graph in its range, in each session's order.
    func funnel(_ query: FunnelQuery) throws(StoreError) -> [Int]
}

extension FeedStore {
    /// Records are numbered as they become visible (memory), or a reader waits for a horizon it
    /// polls (PostgreSQL): no write holds back another's record.
    package var holdsBackLaterRecords: Bool { false }
}

/// Snapshots of sessions at past versions kept in a durable store (docs/design.md, "The session at
/// a past version"): a shortcut for rebuilding a past version that survives a restart and that
/// every process of a shared store reads. Never the truth: one missing costs a longer replay,
/// nothing else. The store removes them with their session's records (its purges, and its sweep:
/// a checkpoint whose next record is gone, or whose session is, can no longer be a base), and
/// keeps their bytes within an eighth of the feed's byte budget, dropping the oldest kept first:
/// at its sweep, and as they are written.
package protocol CheckpointStore: Sendable {
    /// Keeps session `id`'s snapshot (with its graph version) at `version`; a second one for the
    /// same version changes nothing. Once this process has written an eighth of `maxBytes` since
    /// it last did so, the oldest kept go while all of them take more than `maxBytes`: between
    /// sweeps, checkpoints of large snapshots written fast overshot their budget fourfold.
    func keepCheckpoint(of id: String, version: Int, snapshot: [UInt8], within maxBytes: Int) throws(StoreError)

    /// Session `id`'s newest checkpoint below `version`.
    func checkpoint(of id: String, below version: Int) throws(StoreError) -> (version: Int, snapshot: [UInt8])?
}

/// When a ``CheckpointStore`` trims its checkpoints' bytes between sweeps: each time this process
/// has written an eighth of their budget since it last did.
package final class CheckpointTrimming: Sendable {
    private let written = Atomic<Int>(0)

    package init() {}

    /// Counts a checkpoint of `bytes` written. - Returns: whether to trim now (counting starts again).
    package func isDue(writing bytes: Int, within maxBytes: Int) -> Bool {
        guard written.add(bytes, ordering: .relaxed).newValue >= maxBytes / 8 else { return false }
        written.store(0, ordering: .relaxed)
        return true
    }
}
