import NavSessions

/// The SQLite store's decoded sessions, bounded by an estimate of the memory they take: when
/// over its limit, the least recently used leave first (they are read back from the database and
/// the change log on demand, see ``SQLiteStore``).
///
/// A dictionary from id to a slot, and the slots in a doubly linked list from the most to the
/// least recently used, so a hit, an insertion and an eviction are each O(1). Not thread-safe:
/// ``SQLiteStore`` uses it inside its lock.
package struct SessionCache {
    private struct Entry {
        package var session: StoredSession?
        package var cost: Int
        /// Neighbouring slots: towards the most recently used, towards the least; -1 at the ends.
        var newer: Int
        var older: Int
    }

    /// The most bytes the entries may take (by ``cost(snapshotBytes:)``); one entry is always kept.
    package let limit: Int
    /// What the entries take now, by their estimates.
    private(set) var bytes = 0
    private var slots: [String: Int] = [:]
    private var entries: [Entry] = []
    private var free: [Int] = []
    private var newest = -1
    private var oldest = -1

    package init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// About the memory a decoded session takes, from the size of its snapshot's JSON: a decoded
    /// screen stack, context and state take about 2.3 times their JSON text (a session with a
    /// 64 KB context measured 151 KB), plus the session's own fields and the cache's slot.
    package static func cost(snapshotBytes: Int) -> Int {
        512 + snapshotBytes * 5 / 2
    }

    package var count: Int { slots.count }

    /// The session, now the most recently used.
    package mutating func get(_ id: String) -> StoredSession? {
        guard let slot = slots[id] else { return nil }
        if slot != newest {
            unlink(slot)
            linkNewest(slot)
        }
        return entries[slot].session
    }

    /// The session, without reordering (for listings, which would otherwise churn the order).
    package func peek(_ id: String) -> StoredSession? {
        slots[id].flatMap { entries[$0].session }
    }

    /// The cached version of a session, without reordering.
    package func version(of id: String) -> Int? {
        slots[id].flatMap { entries[$0].session?.state.version }
    }

    /// The cached touch time of a session, without reordering.
    func touchedAt(_ id: String) -> Int64? {
        slots[id].flatMap { entries[$0].session?.touchedAt }
    }

    /// Adds or replaces a session as the most recently used, then evicts the least recently used
    /// while over the limit (never this one).
    package mutating func put(_ session: StoredSession, cost: Int) {
        let slot: Int
        if let existing = slots[session.id] {
            slot = existing
            bytes += cost - entries[slot].cost
            entries[slot].session = session
            entries[slot].cost = cost
            if slot != newest {
                unlink(slot)
                linkNewest(slot)
            }
        } else {
            if let reused = free.popLast() {
                slot = reused
                entries[slot] = Entry(session: session, cost: cost, newer: -1, older: -1)
            } else {
                slot = entries.count
                entries.append(Entry(session: session, cost: cost, newer: -1, older: -1))
            }
            slots[session.id] = slot
            bytes += cost
            linkNewest(slot)
        }
        while bytes > limit, oldest != slot, oldest >= 0 {
            release(oldest)
        }
    }

    package mutating func remove(_ id: String) {
        guard let slot = slots[id] else { return }
        release(slot)
    }

    private mutating func release(_ slot: Int) {
        unlink(slot)
        if let id = entries[slot].session?.id { slots[id] = nil }
        bytes -= entries[slot].cost
        entries[slot] = Entry(session: nil, cost: 0, newer: -1, older: -1)
        free.append(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let newer = entries[slot].newer
        let older = entries[slot].older
        if newer >= 0 { entries[newer].older = older } else { newest = older }
        if older >= 0 { entries[older].newer = newer } else { oldest = newer }
        entries[slot].newer = -1
        entries[slot].older = -1
    }

    private mutating func linkNewest(_ slot: Int) {
        entries[slot].older = newest
        entries[slot].newer = -1
        if newest >= 0 { entries[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
