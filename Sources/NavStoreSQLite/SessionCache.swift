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

    /// The most bytes the entries may take (by ``cost(snapshot:)``); one entry is always kept.
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

    /// About the memory a decoded session takes, from its snapshot's JSON: the text's bytes twice
    /// over (a session with a 64 KB context of strings measured 151 KB), and for each value and
    /// each array or object what decoding makes of it, which the text does not show: a value
    /// takes its 24-byte slot whatever its text, two bytes for `0,`, and an array or object its
    /// own allocation. Counted by the text alone, states of tiny values (`[0,0,…]`, `[[0],…]`)
    /// held 11 times `--cache-size`. Values are counted by their commas, containers by their
    /// opening brackets, inside strings too (an estimate above the truth, never below), sixteen
    /// bytes at a time: every change's snapshot is counted so.
    package static func cost(snapshot: [UInt8]) -> Int {
        let (commas, openings) = snapshot.withUnsafeBytes { bytes -> (Int, Int) in
            let comma = SIMD16<UInt8>(repeating: UInt8(ascii: ","))
            // `[` (0x5B) and `{` (0x7B) differ in one bit.
            let brace = SIMD16<UInt8>(repeating: UInt8(ascii: "{"))
            let bit = SIMD16<UInt8>(repeating: 0x20)
            let one = SIMD16<UInt8>(repeating: 1)
            var commas = 0
            var openings = 0
            var offset = 0
            while offset + 16 <= bytes.count {
                // Lane counts of up to 255 chunks, then added up.
                var commaLanes = SIMD16<UInt8>()
                var openingLanes = SIMD16<UInt8>()
                let end = min(bytes.count - 15, offset + 255 * 16)
                while offset < end {
                    let chunk = bytes.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
                    commaLanes &+= one.replacing(with: 0, where: chunk .!= comma)
                    openingLanes &+= one.replacing(with: 0, where: chunk | bit .!= brace)
                    offset += 16
                }
                commas += SIMD16<Int>(truncatingIfNeeded: commaLanes).wrappedSum()
                openings += SIMD16<Int>(truncatingIfNeeded: openingLanes).wrappedSum()
            }
            for byte in bytes[offset...] {
                commas &+= byte == UInt8(ascii: ",") ? 1 : 0
                openings &+= byte | 0x20 == UInt8(ascii: "{") ? 1 : 0
            }
            return (commas, openings)
        }
        return 512 + snapshot.count * 2 + commas * 40 + openings * 160
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
    /// while over the limit (never this one). A snapshot the session carries is not kept.
    package mutating func put(_ stored: StoredSession, cost: Int) {
        let session = stored.encodedSnapshot == nil ? stored : stored.withoutEncodedSnapshot
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
