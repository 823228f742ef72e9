import NavSessions

/// The sessions this process last wrote or read, so that a change does not read its session
/// from PostgreSQL first (docs/design.md, "PostgreSQL": one round trip per navigation, not two).
///
/// A cached session may be behind the database — another process changed it since — so it is
/// only ever used for a change, never to answer a read: the change's compare-and-set on
/// `version` finds out, and a lost race re-reads. Notices from other processes drop their
/// sessions from here, which makes that rare. Bounded by count (an arbitrary entry leaves
/// when a shard is full): it saves a read, it is not where sessions live.
final class PostgresSessionCache: Sendable {
    private let shards: [Locked<[String: StoredSession]>]
    private let perShard: Int

    init(capacity: Int = 16_384) {
        shards = (0..<16).map { _ in Locked([:]) }
        perShard = max(1, capacity / 16)
    }

    private func shard(_ id: String) -> Locked<[String: StoredSession]> {
        var hasher = Hasher()
        hasher.combine(id)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    /// The cached session, marked ``StoredSession/mayBeStale``.
    func get(_ id: String) -> StoredSession? {
        guard var session = shard(id).withLock({ $0[id] }) else { return nil }
        session.mayBeStale = true
        return session
    }

    /// Keeps `session` (not a snapshot it carries) unless a newer version of it is cached already.
    func put(_ session: StoredSession) {
        let perShard = self.perShard
        shard(session.id).withLock { map in
            if let cached = map[session.id], cached.state.version > session.state.version { return }
            if map[session.id] == nil, map.count >= perShard, let any = map.keys.first { map[any] = nil }
            var kept = session.withoutEncodedSnapshot
            kept.mayBeStale = false
            map[session.id] = kept
        }
    }

    func remove(_ id: String) {
        _ = shard(id).withLock { $0.removeValue(forKey: id) }
    }

    /// Forgets everything: notices may have been missed (the listening connection broke).
    func removeAll() {
        for shard in shards { shard.withLock { $0.removeAll(keepingCapacity: true) } }
    }
}
