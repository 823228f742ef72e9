import NavCore
import Synchronization

/// Sessions in this process's memory (`--store memory`): for tests and throwaway runs.
///
/// Sessions are spread over shards, each behind its own mutex, so that requests for
/// different sessions rarely wait for each other.
package final class MemoryStore: SessionStore {
    package let name = "memory"
    private let shards: [Locked<[Key: Entry]>]
    private let retainedEvents: Int

    /// A class, so a shard's dictionary holds one word per session: dictionaries keep up to
    /// half their buckets empty, and empty buckets of a 150-byte value cost more than the boxes.
    ///
    /// `@unchecked Sendable`: an entry is only read or changed while its shard's lock is held.
    private final class Entry: @unchecked Sendable {
        package var session: StoredSession
        package var events: EventLog

        package init(session: StoredSession, events: EventLog) {
            self.session = session
            self.events = events
        }
    }

    package init(retainedEvents: Int = 1000, shardCount: Int = 64) {
        self.retainedEvents = retainedEvents
        self.shards = (0..<max(1, shardCount)).map { _ in Locked([:]) }
    }

    /// A session id as a dictionary key: its 128 bits, kept as two words in the dictionary's own
    /// buckets, so a lookup among a million sessions compares and hashes 16 bytes in place instead
    /// of following each candidate key to its string's storage (a cache miss per GET). Only ids of
    /// navd's own form (``SessionID``) make a key: any other text names no session.
    private struct Key: Hashable {
        package let high: UInt64
        package let low: UInt64

        init?(_ id: String) {
            guard let value = SessionID.value(id) else { return nil }
            high = value.high
            low = value.low
        }
    }

    private func shard(_ key: Key) -> Locked<[Key: Entry]> {
        // navd makes its ids from 128 random bits, so their low word spreads them evenly.
        shards[Int(UInt(truncatingIfNeeded: key.low) % UInt(shards.count))]
    }

    package func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        let retained = retainedEvents
        guard let key = Key(session.id) else { throw SessionID.invalid(session.id) }
        let inserted = shard(key).withLock { entries in
            guard entries[key] == nil else { return false }
            var log = EventLog(events)
            log.retain(retained)
            entries[key] = Entry(session: session.compacted(), events: log.compacted())
            return true
        }
        guard inserted else { throw StoreError(message: "session \(session.id) exists") }
    }

    package func load(_ id: String) throws(StoreError) -> StoredSession? {
        guard let key = Key(id) else { return nil }
        return shard(key).withLock { $0[key]?.session }
    }

    package func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8]) throws(StoreError)
        -> Bool
    {
        let retained = retainedEvents
        guard let key = Key(session.id) else { throw SessionID.invalid(session.id) }
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

    package func delete(_ id: String) throws(StoreError) -> Bool {
        guard let key = Key(id) else { return false }
        return shard(key).withLock { $0.removeValue(forKey: key) != nil }
    }

    package func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        guard let key = Key(id) else { return [] }
        return shard(key).withLock { entries in
            entries[key]?.events.events(after: after, limit: limit) ?? []
        }
    }

    package func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> [String] {
        var removed: [String] = []
        for shard in shards {
            removed += shard.withLock { entries in
                let expired = entries.filter { $0.value.session.touchedAt < cutoff }
                for key in expired.keys { entries.removeValue(forKey: key) }
                return expired.values.map { $0.session.id }
            }
        }
        return removed
    }

    package func list(limit: Int) throws(StoreError) -> [StoredSession] {
        var result: [StoredSession] = []
        for shard in shards where result.count < limit {
            let remaining = limit - result.count
            result += shard.withLock { entries in entries.values.prefix(remaining).map { $0.session } }
        }
        return result.sorted { $0.createdAt < $1.createdAt }
    }

    package func ids(ofGraph name: String, after: String, limit: Int) throws(StoreError) -> [String] {
        var ids: [String] = []
        for shard in shards {
            let found: [String] = shard.withLock { entries in
                entries.values.compactMap { $0.session.graphName == name && $0.session.id > after ? $0.session.id : nil }
            }
            ids += found
        }
        return Array(ids.sorted().prefix(limit))
    }

    package func count() throws(StoreError) -> Int {
        shards.reduce(0) { total, shard in total + shard.withLock { $0.count } }
    }

    package func close() {}
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
