import Dispatch
import NavCore
import NavJSON
import Synchronization

/// The feed's use cases (docs/design.md, "Navigation analytics"): the records written with each
/// change (``SessionService/apply(_:to:credentials:ifMatch:once:keep:answer:)`` and the others
/// make them), reading them, forgetting them, and what `/metrics` counts of them.
extension SessionService {
    /// The key feed watchers (long polls and streams of `GET /v1/feed`) are registered under in
    /// ``live``: not a session id (ids are hex), so no session's watchers are told of records.
    package static let feedWatchKey = "feed"

    /// The end record of `session`: its last stage as `from`, no stage as `to`.
    static func endRecord(of session: StoredSession, reason: FeedEndReason, settings: FeedSettings) -> FeedRecord {
        FeedRecord.make(
            session: session.id, graph: session.graphName, graphVersion: session.graphVersion, time: session.touchedAt, kind: .end,
            intent: nil, before: session.state, after: nil, events: [], endReason: reason, settings: settings)
    }

    func endRecord(of session: StoredSession, reason: FeedEndReason, settings: FeedSettings) -> FeedRecord {
        var ended = session
        ended.touchedAt = currentTime()
        return Self.endRecord(of: ended, reason: reason, settings: settings)
    }

    /// A record was written: counted, and the feed's watchers told. The feed's bytes are checked
    /// against `--max-feed-bytes` after every record, and the write that passes the budget sweeps
    /// the oldest before it answers, so the budget holds between the periodic sweeps too. The
    /// bytes are a counter in memory; on PostgreSQL, which processes share, a figure read at most
    /// every ``StoreStatistics/sessionCountSeconds``, so there it holds to what that long adds.
    /// The sweep goes a slack below the budget (``feedSweepSlack(_:)``): a feed at its budget
    /// sweeps a batch every so many records, not one record with every write.
    func feedWritten(_ record: FeedRecord, kind: FeedKind) {
        feedCounts.count(record, kind: kind)
        feedSignal()
        guard let settings = configuration.feed, store.feedUsage().bytes > settings.maxBytes else { return }
        let target = settings.maxBytes - Self.feedSweepSlack(settings.maxBytes)
        _ = try? store.sweepFeed(olderThan: currentTime() - settings.retention, maxBytes: target)
    }

    /// A write that carried a record wrote none (it failed, or found nothing to change). A store
    /// that held a position for it shows no record written after that position until the write
    /// ends (``FeedStore/holdsBackLaterRecords``, SQLite): those records are visible now, and the
    /// watchers told of them while they were held back are told again. Other stores hold nothing
    /// back, so a lost compare-and-set on PostgreSQL wakes no watcher.
    func feedWriteFailed() {
        if store.holdsBackLaterRecords { feedSignal() }
    }

    /// Runs a store write that carries `record` (nil: the feed is off), telling the feed's
    /// watchers (``feedWriteFailed()``) when it ends without writing it: it answers false, or
    /// throws. - Returns: whether it wrote.
    func writing(_ record: FeedRecord?, _ write: () throws(ServiceError) -> Bool) throws(ServiceError) -> Bool {
        let written: Bool
        do {
            written = try write()
        } catch {
            if record != nil { feedWriteFailed() }
            throw error
        }
        if !written, record != nil { feedWriteFailed() }
        return written
    }

    /// How far below the budget a sweep the budget started goes: a sixteenth of it, at most 64 KiB
    /// (some 80 records).
    static func feedSweepSlack(_ maxBytes: Int) -> Int {
        min(maxBytes / 16, 64 << 10)
    }

    /// Tells the feed's watchers to look for new records. With a store several processes share,
    /// also once a second (``followStore()``): a record another process wrote is handed out only
    /// once every write before it has finished, which no notice announces.
    package func feedSignal() {
        live.refresh(Self.feedWatchKey)
    }

    /// Has the feed's watchers look again every second (see ``feedSignal()``).
    func startFeedPolling() {
        let timer = DispatchSource.makeTimerSource(queue: live.queue)
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
        timer.setEventHandler { [live] in live.refresh(Self.feedWatchKey) }
        timer.resume()
        feedPoll.withLock { $0 = FeedPoll(timer: timer) }
    }

    /// A page of the feed: records from `start`, at most `limit` and within ``FeedPage/maxBytes``,
    /// in `form`. `param` names where an `after` cursor came from (`after`, or a stream's
    /// `Last-Event-ID`), for the refusals.
    /// - Throws: 400 `invalid_request` for an `after` the feed never handed out (above every
    ///   cursor given, or in another store's form): an empty page would answer it forever; 410
    ///   `cursor_expired` for one older than the records retained (some after it were swept); 404
    ///   when the feed is off.
    package func feed(from start: FeedStart, limit: Int, form: FeedForm, param: String = "after") throws(ServiceError) -> FeedPage {
        guard configuration.feed != nil else { throw ServiceError(.notFound, "the feed is off (--feed-retention 0)") }
        if let cursor = start.cursor {
            guard try storeCall({ () throws(StoreError) in try store.feedGave(cursor) }) else {
                throw ServiceError(
                    .invalidRequest,
                    "cursor \(cursor) was never handed out by this feed (pass a record's cursor or a page's 'next'; start again "
                        + "from since or the oldest record)", param: param)
            }
            try expireIfSwept(after: cursor, param: param)
            let page = try storeCall { () throws(StoreError) in try store.feed(from: start, limit: limit, form: form) }
            // A sweep (another request's write may pass the budget) can have run between the check
            // and the read: the floor only rises, so one still at or below the cursor now means no
            // record after it went before the read ended.
            try expireIfSwept(after: cursor, param: param)
            return page.capped()
        }
        return try storeCall { () throws(StoreError) in try store.feed(from: start, limit: limit, form: form) }.capped()
    }

    /// 410 `cursor_expired` when records after `cursor` were swept (the floor is past it).
    private func expireIfSwept(after cursor: FeedCursor, param: String) throws(ServiceError) {
        let floor = try storeCall { () throws(StoreError) in try store.feedFloor() }
        guard cursor >= floor else {
            throw ServiceError(
                .cursorExpired, "records after cursor \(cursor) were swept (older than --feed-retention or beyond --max-feed-bytes)",
                param: param)
        }
    }

    /// The time range a traffic or funnel query covers: from `since` (default: the oldest a
    /// retained record can be, now less `--feed-retention`) up to `until` (default: now),
    /// `until` excluded. - Returns: nil when the feed is off.
    package func feedRange(since: Int64?, until: Int64?) -> Range<Int64>? {
        guard let settings = configuration.feed else { return nil }
        let now = currentTime()
        let until = until ?? now
        let since = since ?? min(until, now - settings.retention)
        return since..<max(since, until)
    }

    /// `graph`'s views in `range`, by scene and edge (docs/design.md, "Traffic and funnels").
    /// - Throws: 404 when the feed is off.
    package func traffic(graph: String, in range: Range<Int64>) throws(ServiceError) -> FeedTraffic {
        guard configuration.feed != nil else { throw ServiceError(.notFound, "the feed is off (--feed-retention 0)") }
        return try storeCall { () throws(StoreError) in try store.traffic(graph: graph, in: range) }
    }

    /// The sessions that reached each step of `query`. - Throws: 404 when the feed is off.
    package func funnel(_ query: FunnelQuery) throws(ServiceError) -> [Int] {
        guard configuration.feed != nil else { throw ServiceError(.notFound, "the feed is off (--feed-retention 0)") }
        return try storeCall { () throws(StoreError) in try store.funnel(query) }
    }

    /// What `/metrics` shows of the feed.
    package func feedStatistics() -> FeedStatistics {
        let (views, changes, records) = feedCounts.snapshot
        let usage = store.feedUsage()
        return FeedStatistics(
            views: views, changes: changes, records: records, retained: usage.records, bytes: usage.bytes,
            maxBytes: configuration.feed?.maxBytes)
    }

    /// Removes the records `purge` names from the feed and from history. - Returns: how many.
    package func purgeFeed(_ purge: FeedPurge) throws(ServiceError) -> Int {
        let purged = try storeCall { () throws(StoreError) in try store.purgeFeed(purge) }
        // A checkpoint is no way around a purge: a purged session's past is not shown again.
        switch purge {
        case .session(let id): checkpoints.forget(id)
        case .attribute: checkpoints.forget(nil)
        }
        return purged
    }
}

extension SessionService.Change {
    /// The record's `kind` of this change.
    var feedKind: FeedKind {
        switch self {
        case .intent(let intent): FeedKind(intent)
        case .confirmation: .confirm
        case .upgrade: .upgrade
        }
    }
}

/// What `/metrics` counts of the records written by this process: screen views by graph and
/// scene, changes by graph and kind, records in all. Labels are graphs, scenes and kinds, never
/// pairs of scenes, so their number stays bounded by the graphs loaded.
package final class FeedCounts: Sendable {
    /// One graph's counts: changes by kind (``FeedKind`` in declaration order), views by scene.
    private struct GraphCounts {
        var kinds = [Int](repeating: 0, count: FeedKind.allCases.count)
        var views: [String: Int] = [:]

        mutating func count(_ kindIndex: Int, view scene: String?) {
            kinds[kindIndex] += 1
            if let scene { views[scene, default: 0] += 1 }
        }
    }

    private struct Counts {
        var graphs: [String: GraphCounts] = [:]
        var records = 0
    }

    package struct Pair: Hashable, Sendable {
        package var graph: String
        package var label: String
    }

    private let counts = Mutex(Counts())
    private static let kindIndex: [FeedKind: Int] = Dictionary(
        uniqueKeysWithValues: FeedKind.allCases.enumerated().map { ($1, $0) })

    package init() {}

    /// Counts `record`: a screen view when it is one (``FeedRecord/toScene``: its visible top is
    /// another screen than before).
    /// - Returns: the records counted so far.
    @discardableResult
    func count(_ record: FeedRecord, kind: FeedKind) -> Int {
        let kindIndex = Self.kindIndex[kind] ?? 0
        return counts.withLock { counts in
            counts.records += 1
            counts.graphs[record.graph, default: GraphCounts()].count(kindIndex, view: record.toScene)
            return counts.records
        }
    }

    /// Screen views, changes by kind, and records written.
    package var snapshot: (views: [Pair: Int], changes: [Pair: Int], records: Int) {
        counts.withLock { counts in
            var views: [Pair: Int] = [:]
            var changes: [Pair: Int] = [:]
            for (graph, graphCounts) in counts.graphs {
                for (scene, count) in graphCounts.views { views[Pair(graph: graph, label: scene)] = count }
                for (index, kind) in FeedKind.allCases.enumerated() where graphCounts.kinds[index] > 0 {
                    changes[Pair(graph: graph, label: kind.rawValue)] = graphCounts.kinds[index]
                }
            }
            return (views, changes, counts.records)
        }
    }
}

/// The feed's counts and its store's usage, for `/metrics`.
package struct FeedStatistics: Sendable {
    package var views: [FeedCounts.Pair: Int]
    package var changes: [FeedCounts.Pair: Int]
    /// Records this process wrote.
    package var records: Int
    /// Records the store keeps, and their bytes.
    package var retained: Int
    package var bytes: Int
    /// `--max-feed-bytes`; nil when the feed is off.
    package var maxBytes: Int?
}

/// A timer source, used only under its owner's mutex (Dispatch's sources are thread-safe).
struct FeedPoll: @unchecked Sendable {
    let timer: any DispatchSourceTimer
}
