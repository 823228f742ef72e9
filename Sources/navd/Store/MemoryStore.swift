import NavCore
import Synchronization

/// Sessions in this process's memory (`--store memory`): for tests and throwaway runs.
///
/// Sessions are spread over shards, each behind its own mutex, so that requests for
/// different sessions rarely wait for each other.
final class MemoryStore: SessionStore {
    let name = "memory"
    private let shards: [Locked<[Key: Entry]>]
    private let retainedEvents: Int

    /// A class, so a shard's dictionary holds one word per session: dictionaries keep up to
    /// half their buckets empty, and empty buckets of a 150-byte value cost more than the boxes.
    ///
    /// `@unchecked Sendable`: an entry is only read or changed while its shard's lock is held.
    private final class Entry: @unchecked Sendable {
        var session: StoredSession
        var events: EventLog

        init(session: StoredSession, events: EventLog) {
            self.session = session
            self.events = events
        }
    }

    init(retainedEvents: Int = 1000, shardCount: Int = 64) {
        self.retainedEvents = retainedEvents
        self.shards = (0..<max(1, shardCount)).map { _ in Locked([:]) }
    }

    /// A session id as a dictionary key. navd's ids are 32 hex digits, kept as two words in the
    /// dictionary's own buckets: a lookup among a million sessions then compares and hashes 16
    /// bytes in place instead of following each candidate key to its string's storage (a cache
    /// miss per GET). Any other id (one a client made up) is kept as its text.
    private enum Key: Hashable {
        case hex(UInt64, UInt64)
        case text(String)

        init(_ id: String) {
            var id = id
            self = id.withUTF8 { bytes -> Key? in
                guard bytes.count == 32, let base = bytes.baseAddress else { return nil }
                let raw = UnsafeRawPointer(base)
                var digits: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
                for index in 0..<4 {
                    let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
                    guard let value = Self.value(ofEightDigits: word) else { return nil }
                    switch index {
                    case 0: digits.0 = value
                    case 1: digits.1 = value
                    case 2: digits.2 = value
                    default: digits.3 = value
                    }
                }
                return .hex(UInt64(digits.0) << 32 | UInt64(digits.1), UInt64(digits.2) << 32 | UInt64(digits.3))
            } ?? .text(id)
        }

        /// Eight lowercase hex digits, read as a little-endian word (the first digit in the low
        /// byte), as their value; `nil` if one byte is anything else (uppercase too, which
        /// `SessionService.newID` never writes: "AB…" stays its own id). All eight at once: a byte
        /// below 0x80 plus `0x80 - c` has its top bit set exactly when it is at least `c`.
        @inline(__always)
        static func value(ofEightDigits word: UInt64) -> UInt32? {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let tops = ones &* 0x80
            guard word & tops == 0 else { return nil }
            let atLeastZero = (word &+ ones &* (0x80 - 0x30)) & tops
            let pastNine = (word &+ ones &* (0x80 - 0x3A)) & tops
            let atLeastA = (word &+ ones &* (0x80 - 0x61)) & tops
            let pastF = (word &+ ones &* (0x80 - 0x67)) & tops
            guard (atLeastZero & ~pastNine) | (atLeastA & ~pastF) == tops else { return nil }
            // '0'…'9' are 0x30…0x39 and 'a'…'f' 0x61…0x66: the low four bits, plus 9 for a letter (bit 6).
            let nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
            // Neighbouring digits joined, the first the higher: bytes, then 16-bit lanes, then the word.
            let pairs = ((nibbles << 4) | (nibbles >> 8)) & 0x00FF_00FF_00FF_00FF
            let quads = ((pairs << 8) | (pairs >> 16)) & 0x0000_FFFF_0000_FFFF
            return UInt32(truncatingIfNeeded: (quads << 16) | (quads >> 32))
        }
    }

    private func shard(_ key: Key) -> Locked<[Key: Entry]> {
        let index: UInt
        switch key {
        // navd makes its ids from 128 random bits, so their low word spreads them evenly;
        // ids a client could choose would need a seeded hash here.
        case .hex(_, let low): index = UInt(truncatingIfNeeded: low)
        case .text(let text):
            var hasher = Hasher()
            hasher.combine(text)
            index = UInt(bitPattern: hasher.finalize())
        }
        return shards[Int(index % UInt(shards.count))]
    }

    func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        let retained = retainedEvents
        let key = Key(session.id)
        let inserted = shard(key).withLock { entries in
            guard entries[key] == nil else { return false }
            var log = EventLog(events)
            log.retain(retained)
            entries[key] = Entry(session: session.compacted(), events: log.compacted())
            return true
        }
        guard inserted else { throw StoreError(message: "session \(session.id) exists") }
    }

    func load(_ id: String) throws(StoreError) -> StoredSession? {
        let key = Key(id)
        return shard(key).withLock { $0[key]?.session }
    }

    func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8]) throws(StoreError) -> Bool {
        let retained = retainedEvents
        let key = Key(session.id)
        return shard(key).withLock { entries in
            guard let entry = entries[key], entry.session.state.version == expectedVersion else { return false }
            // One copy, compacted in place (`compacted()` would copy it once more on the way).
            entry.session = session
            entry.session.state.compactScreens()
            entry.events.append(events)
            entry.events.retain(retained)
            return true
        }
    }

    func delete(_ id: String) throws(StoreError) -> Bool {
        let key = Key(id)
        return shard(key).withLock { $0.removeValue(forKey: key) != nil }
    }

    func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        let key = Key(id)
        return shard(key).withLock { entries in
            entries[key]?.events.events(after: after, limit: limit) ?? []
        }
    }

    func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> Int {
        var removed = 0
        for shard in shards {
            removed += shard.withLock { entries in
                let expired = entries.filter { $0.value.session.touchedAt < cutoff }.map { $0.key }
                for key in expired { entries.removeValue(forKey: key) }
                return expired.count
            }
        }
        return removed
    }

    func list(limit: Int) throws(StoreError) -> [StoredSession] {
        var result: [StoredSession] = []
        for shard in shards where result.count < limit {
            let remaining = limit - result.count
            result += shard.withLock { entries in entries.values.prefix(remaining).map { $0.session } }
        }
        return result.sorted { $0.createdAt < $1.createdAt }
    }

    func count() throws(StoreError) -> Int {
        shards.reduce(0) { total, shard in total + shard.withLock { $0.count } }
    }

    func close() {}
}

extension StoredSession {
    /// The same session with its screen array at about its size (`SessionState.compactScreens()`):
    /// arrays grown by appending keep spare capacity, and a million idle sessions would hold all of it.
    func compacted() -> StoredSession {
        var copy = self
        // Not `copy.state.screens = …`: that would also drop the stage's cached path text, which
        // saves the next navigation of this session writing it again.
        copy.state.compactScreens()
        return copy
    }
}

extension EventLog {
    func compacted() -> EventLog {
        var copy = self
        copy.shrink()
        return copy
    }
}
