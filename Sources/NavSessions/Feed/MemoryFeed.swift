import NavJSON

/// Feed records held in memory, in cursor order: the memory store's feed. Not thread-safe: its
/// owner holds it inside a lock.
package struct MemoryFeed: Sendable {
    package struct Kept: Sendable {
        package var cursor: FeedCursor
        package var record: FeedRecord
    }

    /// Oldest first, in cursor order; a purge leaves holes in the positions.
    private(set) package var records: [Kept] = []
    /// Where the oldest record is in `records` (swept ones are dropped from the front lazily).
    private var head = 0
    private(set) package var bytes = 0
    /// The cursor of the newest record swept: a reader behind it has missed some.
    private(set) package var floor = FeedCursor.start
    /// The last position handed out.
    private(set) package var lastPosition: Int64 = 0
    /// Each session's records by position, oldest first: a session's history is read without a
    /// pass over every session's records under the lock that every change writes under.
    private var sessions: [String: SessionPositions] = [:]

    /// One session's record positions; the sweep drops them from the front.
    private struct SessionPositions: Sendable {
        var positions: [Int64] = []
        var head = 0

        var live: ArraySlice<Int64> { positions[head...] }

        mutating func dropFirst() {
            head += 1
            if head > 64, head * 2 > positions.count {
                positions.removeFirst(head)
                head = 0
            }
        }
    }

    package init(lastPosition: Int64 = 0) {
        self.lastPosition = lastPosition
    }

    package var count: Int { records.count - head }

    /// The positions kept for sessions' histories, all sessions together (tests read it: the
    /// sweep must take them with their records).
    package var positionsKept: Int { sessions.values.reduce(0) { $0 + $1.live.count } }

    /// Appends `record` with the next position. - Returns: its cursor.
    @discardableResult
    package mutating func append(_ record: FeedRecord) -> FeedCursor {
        lastPosition += 1
        let cursor = FeedCursor(position: lastPosition)
        records.append(Kept(cursor: cursor, record: record))
        sessions[record.session, default: SessionPositions()].positions.append(lastPosition)
        bytes += record.cost
        return cursor
    }

    /// Whether `cursor` was handed out: positions only grow and are taken in the lock that shows
    /// their record, so every position up to the last one taken was.
    package func gave(_ cursor: FeedCursor) -> Bool {
        cursor == .start || (cursor.transaction == 0 && cursor.position <= lastPosition)
    }

    /// The records after `start`, up to `limit`, in `form`.
    package func page(from start: FeedStart, limit: Int, form: FeedForm) -> FeedPage {
        var index: Int
        switch start {
        case .oldest: index = head
        case .after(let cursor): index = firstIndex { $0.cursor > cursor }
        case .since(let time, let cursor):
            // Times grow per session, not strictly across sessions (each change reads the clock
            // before it takes the lock): the first record at or after `time`, by a scan.
            index = records[firstIndex { $0.cursor > cursor }...].firstIndex { $0.record.time >= time } ?? records.count
        }
        var entries: [FeedEntry] = []
        while index < records.count, entries.count < limit {
            entries.append(Self.entry(records[index], form: form))
            index += 1
        }
        let next: FeedCursor
        if let last = entries.last {
            next = last.cursor
        } else if case .after(let cursor) = start {
            next = cursor
        } else {
            next = FeedCursor(position: lastPosition)
        }
        return FeedPage(entries: entries, next: next)
    }

    /// Session `id`'s records above `version`, in the full form: found through the session's own
    /// positions, each a binary search away, so the cost grows with the page, not the feed.
    package func history(of id: String, after version: Int, limit: Int) -> [FeedEntry] {
        guard let positions = sessions[id]?.live, limit > 0 else { return [] }
        // A session's versions grow with its positions: the first above `version`, by bisection.
        var low = positions.startIndex
        var high = positions.endIndex
        while low < high {
            let middle = (low + high) / 2
            if let kept = record(at: positions[middle]), kept.record.version > version { high = middle } else { low = middle + 1 }
        }
        var result: [FeedEntry] = []
        for position in positions[low...] {
            guard let kept = record(at: position) else { continue }
            result.append(Self.entry(kept, form: .full))
            if result.count == limit { break }
        }
        return result
    }

    /// The record at `position`, if it is still held.
    private func record(at position: Int64) -> Kept? {
        let index = firstIndex { $0.cursor.position >= position }
        guard index < records.count, records[index].cursor.position == position else { return nil }
        return records[index]
    }

    /// Removes the records `purge` names. - Returns: how many.
    package mutating func purge(_ purge: FeedPurge) -> Int {
        compact()
        let before = records.count
        records.removeAll { kept in
            guard purge.matches(session: kept.record.session, attributes: kept.record.attributes) else { return false }
            bytes -= kept.record.cost
            return true
        }
        guard records.count != before else { return 0 }
        // Rare (an operator's request): the positions are made again from what is left.
        sessions = [:]
        for kept in records { sessions[kept.record.session, default: SessionPositions()].positions.append(kept.cursor.position) }
        return before - records.count
    }

    /// Drops records older than `cutoff`, then the oldest until at most `maxBytes` remain.
    package mutating func sweep(olderThan cutoff: Int64, maxBytes: Int) -> Int {
        var swept = 0
        while head < records.count, records[head].record.time < cutoff || bytes > maxBytes {
            bytes -= records[head].record.cost
            floor = records[head].cursor
            let session = records[head].record.session
            // The oldest record is its session's oldest too.
            sessions[session]?.dropFirst()
            if sessions[session]?.live.isEmpty == true { sessions[session] = nil }
            head += 1
            swept += 1
        }
        if head > 1024, head * 2 > records.count { compact() }
        return swept
    }

    /// Calls `body` with the records after `cursor`, at most `limit` of them, in cursor order, in
    /// place (no record copied). - Returns: the last one's cursor; nil when there was none.
    package func scan(after cursor: FeedCursor, limit: Int, _ body: (FeedRecord) -> Void) -> FeedCursor? {
        let first = firstIndex { $0.cursor > cursor }
        let end = min(records.count, first + max(1, limit))
        guard first < end else { return nil }
        records.withUnsafeBufferPointer { records in
            for index in first..<end { body(records[index].record) }
        }
        return records[end - 1].cursor
    }

    /// Reads records a chunk at a time: `body` gets each record after the cursor, up to a chunk;
    /// the answer is the last one's cursor, nil when there was none.
    package typealias ChunkReader = (_ after: FeedCursor, _ body: (FeedRecord) -> Void) -> FeedCursor?

    /// Every record, oldest first, through `reading`, a chunk after another.
    static func each(reading: ChunkReader, _ body: (FeedRecord) -> Void) {
        withoutActuallyEscaping(body) { body in
            var cursor = FeedCursor.start
            while let last = reading(cursor, body) { cursor = last }
        }
    }

    /// The views of `graph` in `range`, counted by pair of scenes (one count a view).
    package static func traffic(graph: String, in range: Range<Int64>, reading: ChunkReader) -> FeedTraffic {
        var pairs: [FeedTraffic.Pair: Int] = [:]
        each(reading: reading) { record in
            guard let to = record.toScene, range.contains(record.time), record.graph == graph else { return }
            pairs[FeedTraffic.Pair(from: record.fromScene, to: to), default: 0] += 1
        }
        return FeedTraffic(pairs: pairs)
    }

    /// The funnel's counts: the records come in cursor order, so each session's in version order.
    package static func funnel(_ query: FunnelQuery, reading: ChunkReader) -> [Int] {
        var counter = FunnelCounter(steps: query.steps, within: query.within)
        each(reading: reading) { record in
            guard let scene = record.toScene, query.range.contains(record.time), record.graph == query.graph else { return }
            counter.add(session: record.session, time: record.time, scene: scene)
        }
        return counter.counts
    }

    private mutating func compact() {
        records.removeFirst(head)
        head = 0
    }

    /// The first index at or after `head` whose record satisfies `isAfter`, which holds for a
    /// suffix of the records (cursors only grow): a binary search.
    private func firstIndex(where isAfter: (Kept) -> Bool) -> Int {
        var low = head
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(records[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private static func entry(_ kept: Kept, form: FeedForm) -> FeedEntry {
        FeedEntry(
            cursor: kept.cursor, session: kept.record.session, version: kept.record.version, isEnd: kept.record.isEnd,
            time: kept.record.time, members: form == .full ? kept.record.full : kept.record.analytics, form: form
        )
    }
}
