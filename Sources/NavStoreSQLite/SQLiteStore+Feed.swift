import NavCore
import NavJSON
import NavSessions

/// A feed record with its position (``FeedCursor/position``), as the change log carries it and
/// the `feed` table keeps it.
package struct LoggedFeedRecord: Sendable, Equatable {
    package var position: Int64
    package var record: FeedRecord

    package init(position: Int64, record: FeedRecord) {
        self.position = position
        self.record = record
    }
}

/// The feed's numbering and what reads see of it beside the `feed` table, held in
/// ``SQLiteStore/Published``.
///
/// A write takes its records' positions here before it makes them durable (an update under the
/// append lock, before its `pwrite`; a create, a delete or an expiry under the writer lock,
/// before its transaction): they are *in flight*. Once the write is durable they are shown (an
/// update's record joins ``pending`` as the change is published), and a write that fails gives
/// them up, leaving a hole a reader never sees. Reads hand out only positions below the oldest in
/// flight (``visibleLimit``), so a reader paging with ``FeedPage/next`` is never handed a position
/// while a lower one can still appear.
struct FeedState: Sendable {
    /// The last position taken.
    private(set) var lastPosition: Int64
    /// The newest position a reader may have been handed: a record's once shown, or one removed
    /// since (persisted as `feed_position`), so numbering after a restart goes on above it.
    private(set) var lastShown: Int64
    /// Positions taken by writes not durable yet (at most one writer-side and one append-side).
    private var inFlight: [ClosedRange<Int64>] = []
    /// The current generation's feed records (updates'), in position order, until it is sealed.
    var pending: [LoggedFeedRecord] = []
    /// The records retained and their ``FeedRecord/cost``.
    private(set) var records: Int
    private(set) var bytes: Int
    /// The newest position swept (``FeedStore/feedFloor()``).
    private(set) var floor: Int64

    init(lastPosition: Int64, records: Int, bytes: Int, floor: Int64) {
        self.lastPosition = lastPosition
        self.lastShown = lastPosition
        self.records = records
        self.bytes = bytes
        self.floor = floor
    }

    /// Takes the next `count` positions, in flight until ``resolve(_:shown:)``.
    mutating func allocate(_ count: Int) -> ClosedRange<Int64> {
        let range = lastPosition + 1...lastPosition + Int64(max(1, count))
        lastPosition = range.upperBound
        inFlight.append(range)
        return range
    }

    /// The write that took `range` is durable with `shown`, the records at its first positions
    /// (none: it failed, or wrote no record).
    mutating func resolve(_ range: ClosedRange<Int64>, shown: [FeedRecord]) {
        resolve(range, count: shown.count, bytes: shown.reduce(0) { $0 + $1.cost })
    }

    /// ``resolve(_:shown:)`` of `count` records that cost `cost`.
    private mutating func resolve(_ range: ClosedRange<Int64>, count: Int, bytes cost: Int) {
        inFlight.removeAll { $0 == range }
        guard count > 0 else { return }
        records += count
        bytes += cost
        lastShown = max(lastShown, range.lowerBound + Int64(count) - 1)
    }

    /// An update's record, published with its change.
    mutating func showLogged(_ logged: LoggedFeedRecord) {
        pending.append(logged)
        resolve(logged.position...logged.position, count: 1, bytes: logged.record.cost)
    }

    /// Positions below this are visible, and no record will appear below it any more.
    var visibleLimit: Int64 {
        inFlight.map(\.lowerBound).min() ?? lastPosition + 1
    }

    /// The newest position a reader may be told to read on from when it found nothing.
    var newest: Int64 { min(lastShown, visibleLimit - 1) }

    /// Whether a reader can have been handed `cursor`: every position handed out is at or below
    /// ``newest`` when it is (a shown record's, below every write in flight), and `newest` never
    /// goes down, a restart included (`lastShown` starts at the newest position stored or
    /// removed). A position a write holds in flight is not handed out yet.
    func gave(_ cursor: FeedCursor) -> Bool {
        cursor == .start || (cursor.transaction == 0 && cursor.position <= newest)
    }

    /// Records removed (purged or swept) up to `position`.
    mutating func removed(records count: Int, bytes cost: Int, through position: Int64) {
        records -= count
        bytes -= cost
        lastShown = max(lastShown, position)
    }

    /// Records swept through `position`.
    mutating func swept(records count: Int, bytes cost: Int, through position: Int64) {
        removed(records: count, bytes: cost, through: position)
        floor = max(floor, position)
    }
}

/// The feed (docs/design.md, "SQLite: the feed"): records in the `feed` table, and those of
/// changes not folded yet in memory (``Published/feedTail``), read together.
extension SQLiteStore {
    /// The feed's state as the database holds it, once start-up has folded the change log in.
    static func storedFeed(_ connection: SQLiteConnection) throws(StoreError) -> FeedState {
        let totals = try connection.statement("SELECT COALESCE(MAX(position), 0), COUNT(*), COALESCE(SUM(cost), 0) FROM feed")
        _ = try totals.step()
        let (newest, records, bytes) = (totals.int(0), Int(totals.int(1)), Int(totals.int(2)))
        totals.reset()
        let meta = try connection.statement("SELECT key, value FROM store_meta WHERE key IN ('feed_floor', 'feed_position')")
        defer { meta.reset() }
        var floor: Int64 = 0
        var removed: Int64 = 0
        while try meta.step() {
            if meta.text(0) == "feed_floor" { floor = meta.int(1) } else { removed = meta.int(1) }
        }
        return FeedState(lastPosition: max(newest, floor, removed), records: records, bytes: bytes, floor: floor)
    }

    /// Inserts `logged` into `feed`; with `replacing`, sets it by its position, so a fold repeated
    /// after a crash writes it once (`OR REPLACE` cost a quarter of an insert: only where a
    /// record may be there already). The forms are bound in place, not copied.
    package static func insertFeed(_ logged: LoggedFeedRecord, _ connection: SQLiteConnection, replacing: Bool) throws(StoreError) {
        let record = logged.record
        let statement = try connection.statement(
            static: replacing
                ? "INSERT OR REPLACE INTO feed (position, session_id, version, is_end, graph, time, attributes, full, analytics, cost, to_scene, from_scene) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
                : "INSERT INTO feed (position, session_id, version, is_end, graph, time, attributes, full, analytics, cost, to_scene, from_scene) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        )
        .bind(1, logged.position).bind(2, record.session).bind(3, Int64(record.version)).bind(4, record.isEnd ? 1 : 0)
        .bind(5, record.graph).bind(6, record.time).bind(7, utf8: record.attributesJSON).bind(10, Int64(record.cost))
        if let to = record.toScene { try statement.bind(11, to) }
        if let from = record.fromScene { try statement.bind(12, from) }
        try record.full.withUnsafeBufferPointer { full throws(StoreError) in
            try record.analyticsIfDifferent.withUnsafeBufferPointer { analytics throws(StoreError) in
                // Left bound until the statement is next taken, which clears it before it runs.
                try statement.bind(8, lending: full).bind(9, lending: analytics).run()
            }
        }
    }

    /// Records the newest position removed (purged, swept, or dropped by a repair), and with
    /// `floor` the newest swept, in `store_meta`.
    static func recordRemoved(through position: Int64, floor: Bool, _ connection: SQLiteConnection) throws(StoreError) {
        let upsert =
            "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = MAX(value, excluded.value)"
        try connection.statement(upsert).bind(1, "feed_position").bind(2, position).run()
        if floor { try connection.statement(upsert).bind(1, "feed_floor").bind(2, position).run() }
    }

    private static func entry(_ logged: LoggedFeedRecord, form: FeedForm) -> FeedEntry {
        let record = logged.record
        return FeedEntry(
            cursor: FeedCursor(position: logged.position), session: record.session, version: record.version, isEnd: record.isEnd,
            time: record.time, members: form == .full ? record.full : record.analytics, form: form)
    }

    /// Entries of `feed` rows selected as `position, session_id, version, is_end, time, <form>`.
    private static func entries(_ statement: SQLiteConnection.Statement, form: FeedForm) throws(StoreError) -> [FeedEntry] {
        var entries: [FeedEntry] = []
        while try statement.step() {
            entries.append(
                FeedEntry(
                    cursor: FeedCursor(position: statement.int(0)), session: statement.text(1), version: Int(statement.int(2)),
                    isEnd: statement.int(3) != 0, time: statement.int(4), members: statement.bytes(5), form: form))
        }
        return entries
    }

    /// The table's entries and the tail's, each in position order, merged: one entry a position.
    private static func merged(_ table: [FeedEntry], _ tail: [FeedEntry]) -> [FeedEntry] {
        var result: [FeedEntry] = []
        result.reserveCapacity(table.count + tail.count)
        var (i, j) = (0, 0)
        while i < table.count || j < tail.count {
            if j == tail.count || (i < table.count && table[i].cursor.position < tail[j].cursor.position) {
                result.append(table[i])
                i += 1
            } else {
                if i < table.count, table[i].cursor.position == tail[j].cursor.position { i += 1 }
                result.append(tail[j])
                j += 1
            }
        }
        return result
    }

    /// The tail is looked at before the table is read, as ``load(_:)`` looks at the log first: a
    /// record that leaves the tail meanwhile is committed in the table by then, and one found in
    /// both is taken once. Only positions below the limit seen with the tail are read: every
    /// record below it is in the tail or committed, and none will appear below it.
    package func feed(from start: FeedStart, limit: Int, form: FeedForm) throws(StoreError) -> FeedPage {
        let limit = max(0, limit)
        var after: Int64
        switch start {
        case .oldest: after = 0
        case .after(let cursor), .since(_, let cursor):
            // A cursor of another store (PostgreSQL's, with a transaction) is after every position here.
            guard cursor.transaction == 0 else { return FeedPage(entries: [], next: cursor) }
            after = max(0, cursor.position)
        }
        let (tail, visible, newest) = withPublished { published -> ([LoggedFeedRecord], Int64, Int64) in
            (published.feedTail, published.feed.visibleLimit, published.feed.newest)
        }
        // An empty analytics form is the full form's bytes (``FeedRecord/analyticsIfDifferent``).
        let column = form == .full ? "full" : "COALESCE(NULLIF(analytics, ''), full)"
        if case .since(let time, _) = start {
            // The first record at or after `time`, by position (times grow with positions, so the
            // search stops at the first newer record).
            let inTable = try withReader { reader throws(StoreError) -> Int64? in
                let statement = try reader.statement(
                    "SELECT position FROM feed WHERE time >= ? AND position > ? AND position < ? ORDER BY position LIMIT 1")
                try statement.bind(1, time).bind(2, after).bind(3, visible)
                defer { statement.reset() }
                return try statement.step() ? statement.int(0) : nil
            }
            let inTail = tail.first { $0.record.time >= time && $0.position > after && $0.position < visible }?.position
            guard let first = [inTable, inTail].compactMap({ $0 }).min() else {
                // Every record up to the newest shown is older: a reader goes on after them.
                return FeedPage(entries: [], next: FeedCursor(position: max(newest, after)))
            }
            after = first - 1
        }
        let fromTail = tail.lazy.filter { $0.position > after && $0.position < visible }.prefix(limit).map { Self.entry($0, form: form) }
        let fromTable = try withReader { reader throws(StoreError) -> [FeedEntry] in
            let statement = try reader.statement(
                "SELECT position, session_id, version, is_end, time, \(column) FROM feed WHERE position > ? AND position < ? ORDER BY position LIMIT ?"
            )
            try statement.bind(1, after).bind(2, visible).bind(3, Int64(limit))
            defer { statement.reset() }
            return try Self.entries(statement, form: form)
        }
        let entries = Array(Self.merged(fromTable, Array(fromTail)).prefix(limit))
        if let last = entries.last { return FeedPage(entries: entries, next: last.cursor) }
        if case .after(let cursor) = start { return FeedPage(entries: [], next: cursor) }
        return FeedPage(entries: [], next: FeedCursor(position: newest))
    }

    package func feedFloor() throws(StoreError) -> FeedCursor {
        FeedCursor(position: withPublished { $0.feed.floor })
    }

    /// A write takes its position before it is durable (``FeedState``).
    package var holdsBackLaterRecords: Bool { true }

    package func feedGave(_ cursor: FeedCursor) throws(StoreError) -> Bool {
        withPublished { $0.feed.gave(cursor) }
    }

    /// The table's records of session `id` after `version`, at most `limit`, in version order:
    /// `body` steps the statement `SELECT position, session_id, version, <columns>` of each block
    /// of the feed's index (``feedBlockIndex``), oldest first, and answers how many rows it has
    /// taken so far; the blocks stop once that is `limit`. A session's records take positions in
    /// the order of its versions, so its blocks, oldest first, hold them in that order.
    ///
    /// One seek a block: a million records are about a thousand blocks, read in a few
    /// milliseconds, where a scan of the table would take a second.
    static func sessionRecords(
        of id: String, after version: Int, limit: Int, columns: StaticString, _ connection: SQLiteConnection,
        _ body: (SQLiteConnection.Statement) throws(StoreError) -> Int
    ) throws(StoreError) {
        guard limit > 0 else { return }
        let bounds = try connection.statement(static: "SELECT (SELECT MIN(position) FROM feed), (SELECT MAX(position) FROM feed)")
        defer { bounds.reset() }
        guard try bounds.step(), !bounds.isNull(0) else { return }
        let (first, last) = (bounds.int(0) >> feedBlockShift, bounds.int(1) >> feedBlockShift)
        let statement = try connection.statement(
            "SELECT position, session_id, version, \(columns) FROM feed INDEXED BY feed_blocks "
                + "WHERE position >> \(feedBlockShift) = ? AND session_id = ? AND version > ? ORDER BY version LIMIT ?")
        var taken = 0
        for block in first...last {
            try statement.bind(1, block).bind(2, id).bind(3, Int64(version)).bind(4, Int64(min(limit - taken, Int(Int64.max))))
            defer { statement.reset() }
            taken = try body(statement)
            if taken >= limit { return }
        }
    }

    /// The tail first, then the table, as ``feed(from:limit:form:)`` does.
    package func history(of id: String, after version: Int, limit: Int) throws(StoreError) -> [FeedEntry] {
        let limit = max(0, limit)
        let tail = withPublished { published in
            published.feedTail.filter { $0.record.session == id && $0.record.version > version }
        }
        let fromTable = try withReader { reader throws(StoreError) -> [FeedEntry] in
            var entries: [FeedEntry] = []
            try Self.sessionRecords(of: id, after: version, limit: limit, columns: "is_end, time, full", reader) {
                statement throws(StoreError) in
                entries += try Self.entries(statement, form: .full)
                return entries.count
            }
            return entries
        }
        var seen = Set(fromTable.map(\.cursor.position))
        var entries = fromTable
        for logged in tail where seen.insert(logged.position).inserted { entries.append(Self.entry(logged, form: .full)) }
        entries.sort { ($0.version, $0.cursor.position) < ($1.version, $1.cursor.position) }
        return Array(entries.prefix(limit))
    }

    /// From the table, once every logged change is folded in (a chunk at a time, as a sweep of
    /// sessions does), under the fold lock so no fold writes meanwhile: what it removes is gone for
    /// good, a crash cannot fold it back. Records of changes made while it runs may stay, as with
    /// any write that comes after. An attribute is compared as ``FeedPurge/matches(session:attributes:)``
    /// does, on the rows whose attributes hold the key.
    package func purgeFeed(_ purge: FeedPurge) throws(StoreError) -> Int {
        try folding { fold throws(StoreError) -> Int in
            try compactEverything(fold)
            return try withWriter { connection throws(StoreError) -> Int in
                let (count, bytes, newest) = try noting(.database) { () throws(StoreError) -> (Int, Int, Int64) in
                    try connection.transaction { () throws(StoreError) -> (Int, Int, Int64) in
                        var found: [(position: Int64, cost: Int)] = []
                        var sessions: Set<String> = []
                        switch purge {
                        case .session(let id):
                            try Self.sessionRecords(of: id, after: 0, limit: .max, columns: "cost", connection) { rows throws(StoreError) in
                                while try rows.step() { found.append((rows.int(0), Int(rows.int(3)))) }
                                return found.count
                            }
                            sessions.insert(id)
                        case .attribute(let key, _):
                            let rows = try connection.statement(
                                "SELECT f.position, f.cost, f.session_id, f.attributes FROM feed f, json_each(f.attributes) j WHERE j.key = ?"
                            )
                            try rows.bind(1, key)
                            while try rows.step() {
                                let attributes = (try? JSONValue(parsing: rows.bytes(3)))?.objectValue ?? [:]
                                if purge.matches(session: rows.text(2), attributes: attributes) {
                                    found.append((rows.int(0), Int(rows.int(1))))
                                    sessions.insert(rows.text(2))
                                }
                            }
                            rows.reset()
                        }
                        for row in found { try connection.statement("DELETE FROM feed WHERE position = ?").bind(1, row.position).run() }
                        try Self.purgeCheckpoints(of: sessions, connection)
                        let newest = found.map(\.position).max() ?? 0
                        if !found.isEmpty { try Self.recordRemoved(through: newest, floor: false, connection) }
                        return (found.count, found.reduce(0) { $0 + $1.cost }, newest)
                    }
                }
                if count > 0 { withPublished { $0.feed.removed(records: count, bytes: bytes, through: newest) } }
                return count
            }
        }
    }

    /// From the table's oldest rows (by position, no scan): those older than `cutoff`, then while
    /// the feed's running total of bytes is over `maxBytes`; only below the tail and every position
    /// in flight, so no record is left below the floor. Every logged change is folded in first
    /// when the sweep reaches into the tail (a tail record older than `cutoff`, or a tail alone
    /// over `maxBytes`); otherwise the table's rows are enough, and a feed at its budget, swept
    /// every few dozen records by the write that passed it, neither folds its log each time nor
    /// waits for a fold under way (either halved navigations/s): it takes the writer only, as a
    /// fold's chunks do, and deletes only rows below the generation being folded.
    package func sweepFeed(olderThan cutoff: Int64, maxBytes: Int) throws(StoreError) -> Int {
        let (tailBytes, tailOldest) = withPublished { published -> (Int, Int64) in
            let tail = published.feedTail
            return (tail.reduce(0) { $0 + $1.record.cost }, tail.lazy.map(\.record.time).min() ?? .max)
        }
        guard tailBytes > maxBytes || tailOldest < cutoff else { return try sweepTable(olderThan: cutoff, maxBytes: maxBytes) }
        return try folding { fold throws(StoreError) -> Int in
            try compactEverything(fold)
            return try sweepTable(olderThan: cutoff, maxBytes: maxBytes)
        }
    }

    /// ``sweepFeed(olderThan:maxBytes:)``'s deletion, from the table's rows below the tail.
    private func sweepTable(olderThan cutoff: Int64, maxBytes: Int) throws(StoreError) -> Int {
        try withWriter { connection throws(StoreError) -> Int in
            let (total, below) = withPublished { published -> (Int, Int64) in
                (
                    published.feed.bytes,
                    min(
                        published.feed.visibleLimit,
                        (published.compacting?.feed.first ?? published.feed.pending.first)?.position ?? .max)
                )
            }
            let (count, bytes, through) = try noting(.database) { () throws(StoreError) -> (Int, Int, Int64) in
                try connection.transaction { () throws(StoreError) -> (Int, Int, Int64) in
                    let rows = try connection.statement(
                        "SELECT position, time, cost, session_id, version FROM feed WHERE position < ? ORDER BY position")
                    try rows.bind(1, below)
                    var (count, bytes, through) = (0, 0, Int64(0))
                    var swept: [String: Int64] = [:]
                    while try rows.step(), rows.int(1) < cutoff || total - bytes > maxBytes {
                        count += 1
                        bytes += Int(rows.int(2))
                        through = rows.int(0)
                        swept[rows.text(3)] = rows.int(4)
                    }
                    rows.reset()
                    if count > 0 {
                        try connection.statement("DELETE FROM feed WHERE position <= ?").bind(1, through).run()
                        try Self.recordRemoved(through: through, floor: true, connection)
                    }
                    // Also when no record went: a session that ended leaves its checkpoints behind.
                    try Self.sweepCheckpoints(after: swept, maxBytes: FeedSettings.checkpointBytes(forFeedBytes: maxBytes), connection)
                    return (count, bytes, through)
                }
            }
            if count > 0 { withPublished { $0.feed.swept(records: count, bytes: bytes, through: through) } }
            return count
        }
    }

    package func feedUsage() -> (records: Int, bytes: Int) {
        withPublished { ($0.feed.records, $0.feed.bytes) }
    }

    // MARK: Traffic and funnels

    /// The records not folded yet that reads may see (below the oldest write in flight), and that
    /// limit: what traffic and funnels count beside the table. The table is read below the limit
    /// and without the tail's positions, in one statement, so a record folded meanwhile is
    /// counted once (from the tail).
    private func visibleTail() -> (tail: [LoggedFeedRecord], visible: Int64) {
        withPublished { published -> ([LoggedFeedRecord], Int64) in
            let visible = published.feed.visibleLimit
            return (published.feedTail.filter { $0.position < visible }, visible)
        }
    }

    /// `AND position NOT IN (…the tail's positions…)`, bound as a JSON array at `index`.
    private static func excluding(_ tail: [LoggedFeedRecord]) -> String {
        tail.isEmpty ? "" : " AND position NOT IN (SELECT value FROM json_each(?))"
    }

    private static func positionsJSON(_ tail: [LoggedFeedRecord]) -> [UInt8] {
        Array(("[" + tail.map { String($0.position) }.joined(separator: ",") + "]").utf8)
    }

    /// Read from the `feed_blocks` index alone (the graph, time and scenes are in it) and
    /// counted here by pair of scenes, from the column bytes in place: no string is made for a
    /// row whose pair was seen.
    package func traffic(graph: String, in range: Range<Int64>) throws(StoreError) -> FeedTraffic {
        let (tail, visible) = visibleTail()
        var traffic = try withReader { reader throws(StoreError) -> FeedTraffic in
            let statement = try reader.statement(
                "SELECT from_scene, to_scene FROM feed INDEXED BY feed_blocks WHERE graph = ? AND to_scene IS NOT NULL "
                    + "AND time >= ? AND time < ? AND position < ?\(Self.excluding(tail))")
            try statement.bind(1, graph).bind(2, range.lowerBound).bind(3, range.upperBound).bind(4, visible)
            if !tail.isEmpty { try statement.bind(5, utf8: Self.positionsJSON(tail)) }
            defer { statement.reset() }
            var pairs = PairCounts()
            while try statement.step() {
                let isCreation = statement.isNull(0)
                statement.withBytes(0) { from in statement.withBytes(1) { to in pairs.count(from: isCreation ? nil : from, to: to) } }
            }
            return FeedTraffic(pairs: pairs.pairs)
        }
        for logged in tail { traffic.add(logged.record, graph: graph, in: range) }
        return traffic
    }

    /// The step scenes' views from the `feed_blocks` index, a block at a time and in each block
    /// session by session in version order, which hands each session's views in version order
    /// (``sessionRecords(of:after:limit:columns:_:)``); then the tail's, which are newer than
    /// every row of their session (a session's changes are folded in order, and a record written
    /// straight to the table after them is an end, never a view).
    package func funnel(_ query: FunnelQuery) throws(StoreError) -> [Int] {
        var counter = FunnelCounter(steps: query.steps, within: query.within)
        let scenes = Array(Set(query.steps)).sorted()
        let sceneBytes = scenes.map { Array($0.utf8) }
        let (tail, visible) = visibleTail()
        try withReader { reader throws(StoreError) in
            let marks = Array(repeating: "?", count: scenes.count).joined(separator: ",")
            let statement = try reader.statement(
                "SELECT session_id, time, to_scene FROM feed INDEXED BY feed_blocks WHERE graph = ? AND to_scene IS NOT NULL "
                    + "AND to_scene IN (\(marks)) AND time >= ? AND time < ? AND position < ?\(Self.excluding(tail)) "
                    + "ORDER BY position >> \(Self.feedBlockShift), session_id, version")
            try statement.bind(1, query.graph)
            for (index, scene) in scenes.enumerated() { try statement.bind(Int32(2 + index), scene) }
            let next = Int32(2 + scenes.count)
            try statement.bind(next, query.range.lowerBound).bind(next + 1, query.range.upperBound).bind(next + 2, visible)
            if !tail.isEmpty { try statement.bind(next + 3, utf8: Self.positionsJSON(tail)) }
            defer { statement.reset() }
            var session = ""
            var sessionBytes: [UInt8] = []
            while try statement.step() {
                let scene = statement.withBytes(2) { bytes in sceneBytes.firstIndex { $0.elementsEqual(bytes) } }
                guard let scene else { continue }
                if !statement.withBytes(0, { $0.elementsEqual(sessionBytes) }) {
                    sessionBytes = statement.withBytes(0) { Array($0) }
                    session = String(decoding: sessionBytes, as: UTF8.self)
                }
                counter.add(session: session, time: statement.int(1), scene: scenes[scene])
            }
        }
        for logged in tail {
            let record = logged.record
            guard let scene = record.toScene, record.graph == query.graph, query.range.contains(record.time) else { continue }
            counter.add(session: record.session, time: record.time, scene: scene)
        }
        return counter.counts
    }
}

/// Views counted by pair of scenes from a row's bytes, in place: a pair seen before is found by
/// its bytes' hash and compared byte for byte, so only a new pair makes strings.
private struct PairCounts {
    private var slots: [UInt64: [Int]] = [:]
    private var keys: [(from: [UInt8]?, to: [UInt8])] = []
    private var counts: [Int] = []

    mutating func count(from: UnsafeRawBufferPointer?, to: UnsafeRawBufferPointer) {
        var hash: UInt64 = from == nil ? 0x9E37_79B9 : 0xCBF2_9CE4_8422_2325
        for byte in from ?? UnsafeRawBufferPointer(start: nil, count: 0) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        hash = (hash ^ 0xFF) &* 0x100_0000_01B3
        for byte in to { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        for index in slots[hash] ?? [] {
            let key = keys[index]
            let sameFrom: Bool
            switch (key.from, from) {
            case (nil, nil): sameFrom = true
            case (let kept?, let read?): sameFrom = kept.elementsEqual(read)
            default: sameFrom = false
            }
            guard sameFrom, key.to.elementsEqual(to) else { continue }
            counts[index] += 1
            return
        }
        slots[hash, default: []].append(keys.count)
        keys.append((from.map { Array($0) }, Array(to)))
        counts.append(1)
    }

    var pairs: [FeedTraffic.Pair: Int] {
        var pairs: [FeedTraffic.Pair: Int] = [:]
        for (index, key) in keys.enumerated() {
            let pair = FeedTraffic.Pair(
                from: key.from.map { String(decoding: $0, as: UTF8.self) }, to: String(decoding: key.to, as: UTF8.self))
            pairs[pair, default: 0] += counts[index]
        }
        return pairs
    }
}
