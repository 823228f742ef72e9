import NavCore
import NavJSON
import Synchronization

/// Sessions in this process's memory (`--store memory`): for tests and throwaway runs.
///
/// Sessions are spread over shards, each behind its own mutex, so that requests for
/// different sessions rarely wait for each other.
package final class MemoryStore: SessionStore {
    package let name = "memory"
    private let shards: [Locked<[Key: Entry]>]
    private let retainedEvents: Int
    /// The feed's records (docs/design.md, "Navigation analytics"), appended inside the lock of
    /// the session whose change they describe.
    private let feed = Locked(MemoryFeed())
    /// Small named values (``MetaStore``): webhook positions and leases.
    let meta = Locked([String: String]())
    /// Retained events' bytes let go (trimmed, or deleted with their session), for the
    /// `session_bytes` budget (``takeReleasedEventBytes()``). Events are kept packed here
    /// (``EventLog``), in fewer bytes than their JSON: a change is charged their JSON, which the
    /// service has written anyway (``SessionService/charge(_:events:json:)``), and its write
    /// gives back at once what packing saved (measuring the packing first cost 2% of a
    /// navigation's instructions).
    private let released = ReleasedBytes()

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

    package func insert(_ session: StoredSession, events: [LifecycleEvent], keeping answer: KeptAnswer?, record: FeedRecord?)
        throws(StoreError) -> Bool
    {
        let retained = retainedEvents
        guard let key = Key(session.id) else { throw SessionID.invalid(session.id) }
        let inserted = shard(key).withLock { entries in
            guard entries[key] == nil else { return false }
            var log = EventLog(events)
            // Charged as JSON: what packing saves is given back.
            released.add(events.isEmpty ? 0 : events.jsonBytes.count - log.bytes.count)
            released.add(log.retain(retained))
            entries[key] = Entry(session: session.compacted(), events: log.compacted())
            if let record { feed.withLock { _ = $0.append(record) } }
            return true
        }
        guard inserted else { throw StoreError(message: "session \(session.id) exists") }
        return true
    }

    package func load(_ id: String) throws(StoreError) -> StoredSession? {
        guard let key = Key(id) else { return nil }
        return shard(key).withLock { $0[key]?.session }
    }

    package func update(
        _ session: StoredSession, expectedVersion: Int, events: [LifecycleEvent], eventsJSON: [UInt8], keeping answer: KeptAnswer?,
        record: FeedRecord?
    ) throws(StoreError) -> Bool {
        let retained = retainedEvents
        guard let key = Key(session.id) else { throw SessionID.invalid(session.id) }
        return shard(key).withLock { entries in
            guard let entry = entries[key], entry.session.state.version == expectedVersion else { return false }
            // One copy, compacted in place (`compacted()` would copy it once more on the way).
            entry.session = session
            entry.session.state.compactScreens()
            let packed = entry.events.bytes.count
            entry.events.append(events)
            // Charged as JSON: what packing saves is given back.
            released.add(events.isEmpty ? 0 : eventsJSON.count - (entry.events.bytes.count - packed))
            released.add(entry.events.retain(retained))
            if let record { feed.withLock { _ = $0.append(record) } }
            return true
        }
    }

    package func delete(_ id: String, record: FeedRecord?) throws(StoreError) -> Bool {
        guard let key = Key(id) else { return false }
        return shard(key).withLock { entries in
            guard let removed = entries.removeValue(forKey: key) else { return false }
            released.add(removed.events.bytes.count)
            if let record { feed.withLock { _ = $0.append(record) } }
            return true
        }
    }

    package func events(of id: String, after: Int, limit: Int) throws(StoreError) -> [LifecycleEvent] {
        guard let key = Key(id) else { return [] }
        return shard(key).withLock { entries in
            entries[key]?.events.events(after: after, limit: limit) ?? []
        }
    }

    package func deleteExpired(touchedBefore cutoff: Int64, ending: (@Sendable (StoredSession) -> FeedRecord)?) throws(StoreError)
        -> [ExpiredSession]
    {
        var removed: [ExpiredSession] = []
        for shard in shards {
            removed += shard.withLock { entries in
                let expired = entries.filter { $0.value.session.touchedAt < cutoff }
                for (key, entry) in expired {
                    entries.removeValue(forKey: key)
                    released.add(entry.events.bytes.count)
                    if let ending { feed.withLock { _ = $0.append(ending(entry.session)) } }
                }
                return expired.values.map { ExpiredSession(id: $0.session.id, bytes: $0.session.storedBytes) }
            }
        }
        return removed
    }

    /// Sessions here are decoded already: the listing shares them rather than decoding any.
    package func list(limit: Int, _ each: (StoredSession) -> Void) throws(StoreError) {
        var result: [StoredSession] = []
        for shard in shards where result.count < limit {
            let remaining = limit - result.count
            result += shard.withLock { entries in entries.values.prefix(remaining).map { $0.session } }
        }
        result.sort { $0.createdAt < $1.createdAt }
        for session in result { each(session) }
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

    /// Sessions are kept decoded here: each counts the memory its state takes, by estimate
    /// (``SessionState/memoryEstimate``), and no snapshot is written for it.
    package func sessionBytes(of session: StoredSession) -> (bytes: Int, snapshot: [UInt8]?) {
        (session.state.memoryEstimate, nil)
    }

    package func storedSessionBytes() throws(StoreError) -> Int {
        shards.reduce(0) { total, shard in
            total + shard.withLock { $0.values.reduce(0) { $0 + $1.session.storedBytes + $1.events.bytes.count } }
        }
    }

    package func takeReleasedEventBytes() -> Int { released.take() }

    package func dropRetainedEvents(of id: String) throws(StoreError) {
        guard let key = Key(id) else { return }
        shard(key).withLock { entries in
            guard let entry = entries[key] else { return }
            released.add(entry.events.bytes.count)
            entry.events = EventLog()
        }
    }

    package func close() {}

    // MARK: Feed

    package func feed(from start: FeedStart, limit: Int, form: FeedForm) throws(StoreError) -> FeedPage {
        feed.withLock { $0.page(from: start, limit: limit, form: form) }
    }

    package func feedFloor() throws(StoreError) -> FeedCursor {
        feed.withLock { $0.floor }
    }

    package func feedGave(_ cursor: FeedCursor) throws(StoreError) -> Bool {
        feed.withLock { $0.gave(cursor) }
    }

    package func history(of id: String, after version: Int, limit: Int) throws(StoreError) -> [FeedEntry] {
        feed.withLock { $0.history(of: id, after: version, limit: limit) }
    }

    package func purgeFeed(_ purge: FeedPurge) throws(StoreError) -> Int {
        feed.withLock { $0.purge(purge) }
    }

    package func sweepFeed(olderThan cutoff: Int64, maxBytes: Int) throws(StoreError) -> Int {
        feed.withLock { $0.sweep(olderThan: cutoff, maxBytes: maxBytes) }
    }

    package func feedUsage() -> (records: Int, bytes: Int) {
        feed.withLock { ($0.count, $0.bytes) }
    }

    /// The records retained, oldest first (for tests).
    package var feedRecords: [FeedRecord] {
        feed.withLock { feed in feed.records.suffix(feed.count).map(\.record) }
    }

    package func traffic(graph: String, in range: Range<Int64>) throws(StoreError) -> FeedTraffic {
        MemoryFeed.traffic(graph: graph, in: range, reading: scanFeed)
    }

    package func funnel(_ query: FunnelQuery) throws(StoreError) -> [Int] {
        MemoryFeed.funnel(query, reading: scanFeed)
    }

    /// Records a pass over the feed reads under the lock at a time: a few milliseconds, so that
    /// changes, which write their records under it, never wait for a whole pass over a million.
    package static let feedScanChunk = 16_384

    /// One chunk of a pass over the feed (``MemoryFeed/scan(after:limit:_:)``), under its lock.
    private func scanFeed(after cursor: FeedCursor, _ body: (FeedRecord) -> Void) -> FeedCursor? {
        feed.withLock { $0.scan(after: cursor, limit: Self.feedScanChunk, body) }
    }
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

extension SessionState {
    /// About the memory this state takes decoded, never less than its values must allocate: 512
    /// bytes for the session and its entry, 256 for each screen, twice the bytes of its strings,
    /// and ``JSONValue/heapEstimate`` of every context, dependency and state value. Worked out
    /// from the values rather than from a snapshot written for it: a change of the memory store
    /// costs this walk (about 1,700 instructions a navigation), not a snapshot's writing.
    package var memoryEstimate: Int {
        var bytes = 512 + 2 * (pending?.utf8.count ?? 0)
        for (key, value) in context { bytes += 48 + 2 * key.utf8.count + value.heapEstimate }
        return bytes + Self.memoryEstimate(of: screens)
    }

    private static func memoryEstimate(of screens: [Screen]) -> Int {
        var bytes = 64
        for index in screens.indices {
            let screen = screens[index]
            bytes += 256 + 2 * (screen.id.utf8.count + screen.scene.utf8.count) + screen.state.heapEstimate
            for (key, value) in screen.deps { bytes += 48 + 2 * key.utf8.count + value.heapEstimate }
            for (key, value) in screen.params {
                bytes += 48 + 2 * key.utf8.count
                if case .string(let text) = value { bytes += 2 * text.utf8.count }
            }
            if let tabs = screen.tabs {
                bytes += 96 + 2 * tabs.selected.utf8.count
                for (name, stack) in tabs.saved { bytes += 48 + 2 * name.utf8.count + memoryEstimate(of: stack) }
            }
        }
        return bytes
    }
}

extension JSONValue {
    /// About the memory this value takes decoded beyond its own slot: an array 160 bytes and 40
    /// for each element, an object 160 and 48 for each member with twice its key's bytes, a string
    /// twice its bytes. At least what decoding it must allocate, whatever its shape: a state of
    /// tiny values (`[0,0,…]`, `[[0],…]`) counts the megabytes it takes, not its text's size.
    package var heapEstimate: Int {
        switch self {
        case .string(let text): 2 * text.utf8.count
        case .array(let items): items.reduce(160) { $0 + 40 + $1.heapEstimate }
        case .object(let members): members.reduce(160) { $0 + 48 + 2 * $1.key.utf8.count + $1.value.heapEstimate }
        default: 0
        }
    }
}

extension EventLog {
    func compacted() -> EventLog {
        var copy = self
        copy.shrink()
        return copy
    }
}
