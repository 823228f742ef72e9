import NavCore
import Synchronization

/// Sessions in this process's memory (`--store memory`): for tests and throwaway runs.
///
/// Sessions are spread over shards, each behind its own mutex, so that requests for
/// different sessions rarely wait for each other.
final class MemoryStore: SessionStore {
    let name = "memory"
    private let shards: [Locked<[String: Entry]>]
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

    private func shard(_ id: String) -> Locked<[String: Entry]> {
        var hasher = Hasher()
        hasher.combine(id)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    func insert(_ session: StoredSession, events: [LifecycleEvent]) throws(StoreError) {
        let retained = retainedEvents
        let inserted = shard(session.id).withLock { entries in
            guard entries[session.id] == nil else { return false }
            var log = EventLog(events)
            log.retain(retained)
            entries[session.id] = Entry(session: session.compacted(), events: log.compacted())
            return true
        }
        guard inserted else { throw StoreError(message: "session \(session.id) exists") }
    }

    func load(_ id: String) throws(StoreError) -> StoredSession? {
        shard(id).withLock { $0[id]?.session }
    }

    func update(_ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8]) throws(StoreError) -> Bool {
        let retained = retainedEvents
        return shard(session.id).withLock { entries in
            guard let entry = entries[session.id], entry.session.state.version == expectedVersion else { return false }
            entry.session = session.compacted()
            entry.events.append(events)
            entry.events.retain(retained)
            return true
        }
    }

    func delete(_ id: String) throws(StoreError) -> Bool {
        shard(id).withLock { $0.removeValue(forKey: id) != nil }
    }

    func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        shard(id).withLock { entries in
            entries[id]?.events.events(after: after, limit: limit) ?? []
        }
    }

    func deleteExpired(touchedBefore cutoff: Int64) throws(StoreError) -> Int {
        var removed = 0
        for shard in shards {
            removed += shard.withLock { entries in
                let expired = entries.filter { $0.value.session.touchedAt < cutoff }.map { $0.key }
                for id in expired { entries.removeValue(forKey: id) }
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
    /// The same session with its screen array at its exact size: arrays grown by appending keep
    /// spare capacity, and a million idle sessions would hold all of it.
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
