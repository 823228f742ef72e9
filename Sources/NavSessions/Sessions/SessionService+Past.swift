import Dispatch
import NavCore
import NavJSON
import NavSnapshot
import NavWire
import Synchronization

/// The session as it was at a past version (docs/design.md, "History"): its recorded full-form
/// intents applied again through NavCore, with the calls the live service makes
/// (``SessionService/step(_:to:)``), from its creation record or from a checkpoint.
extension SessionService {
    /// A checkpoint is kept every this many versions, so that no answer replays more changes.
    package static let checkpointInterval = 64

    /// The session view at `version`, for a caller that may read the session (as the plain
    /// view): the view the change to `version` answered, without its events.
    /// - Throws: 404 `not_found` (`param: "version"`) above the current version; 410
    ///   `version_expired` when the records to rebuild it are no longer retained, or its graph
    ///   version was removed.
    package func view(of id: String, credentials: Credentials, at version: Int) throws(ServiceError) -> (bytes: [UInt8], version: Int) {
        let session = try read(id, credentials: credentials, access: .read)
        guard version <= session.state.version else {
            throw ServiceError(
                .notFound, "session '\(id)' is at version \(session.state.version); it has no version \(version) yet", param: "version")
        }
        if version == session.state.version { return (view(of: session), version) }
        let past = try pastSession(session, at: version)
        return (view(of: past), version)
    }

    /// The most records read from the store at once while replaying: a long replay holds a page,
    /// not the whole history.
    static let replayPage = 1024

    /// The most changes one answer replays. Checkpoints are bounded by bytes, so a session whose
    /// snapshots are megabytes keeps few of them, and its past versions may lie thousands of
    /// changes from the nearest: each such read replayed them all (13 s of CPU for one, with
    /// the session's own token). Further than this from a checkpoint, a version is answered
    /// 410 `version_expired`; a replay longer than one interval also takes a slot of heavy
    /// work (``Configuration/heavyWork``), so replays never hold every request thread.
    package static let maxReplay = 2048

    /// `session` as it was at `version` (below its current one).
    func pastSession(_ session: StoredSession, at version: Int) throws(ServiceError) -> StoredSession {
        guard configuration.feed != nil else { throw Self.expired(version, "the feed is off (--feed-retention 0): no history is kept") }
        var past = session
        var at = 0
        if let base = try nearestCheckpoint(session, below: version) {
            past.graphVersion = base.graphVersion
            past.state = base.state
            at = base.version
        }
        guard version - at <= Self.maxReplay else {
            throw Self.expired(
                version, "rebuilding it would replay \(version - at) changes from the nearest checkpoint kept, more than \(Self.maxReplay)")
        }
        let heavy = version - at > Self.checkpointInterval ? configuration.heavyWork : nil
        if let heavy, !heavy.acquire() { throw ServiceError.overCapacity(heavy) }
        defer { heavy?.release() }
        var replayed = 0
        while at < version {
            let wanted = min(version - at, Self.replayPage)
            let from = at
            let entries = try storeCall { () throws(StoreError) in try store.history(of: session.id, after: from, limit: wanted) }
            // Versions have no gaps: `wanted` records from `at + 1` to `at + wanted`, or some are gone.
            guard entries.count == wanted, entries.first?.version == at + 1, entries.last?.version == at + wanted,
                !entries.contains(where: \.isEnd)
            else { throw Self.expired(version, "the records of session '\(session.id)' up to version \(version) are no longer retained") }
            for entry in entries {
                try replay(entry, onto: &past, of: session.id, at: version)
                at = entry.version
                if at == 1 { continue }
                replayed += 1
                if at % Self.checkpointInterval == 0 {
                    keepCheckpoint(session.id, version: at, graphVersion: past.graphVersion, state: past.state)
                }
            }
        }
        checkpoints.count(replayed: replayed)
        return past
    }

    /// Applies one recorded change to `past`: its creation (the first record), or a change after it.
    private func replay(_ entry: FeedEntry, onto past: inout StoredSession, of id: String, at version: Int) throws(ServiceError) {
        guard let recorded = RecordedChange(entry), let step = recorded.step else {
            if entry.version == 1 { throw Self.expired(version, "the creation of session '\(id)' is no longer retained") }
            throw ServiceError(.internal, "the record of version \(entry.version) of session '\(id)' could not be read")
        }
        let isCreation: Bool
        if case .create = step { isCreation = true } else { isCreation = false }
        // The first record is the creation, and no other is.
        guard isCreation == (entry.version == 1) else {
            if entry.version == 1 { throw Self.expired(version, "the creation of session '\(id)' is no longer retained") }
            throw ServiceError(.internal, "version \(entry.version) of session '\(id)' is no change to replay")
        }
        let target = try recordedGraph(past.graphName, recorded.graphVersion, version: version)
        let current = isCreation ? target : try recordedGraph(past.graphName, past.graphVersion, version: version)
        let outcome: NavCore.Outcome?
        do {
            outcome = try Self.replay(step, to: past.state, on: current, upgradingTo: target)
        } catch {
            throw ServiceError(.internal, "version \(entry.version) of session '\(id)' could not be replayed")
        }
        guard let outcome, outcome.state.version == entry.version else {
            throw ServiceError(.internal, "version \(entry.version) of session '\(id)' replayed as another version")
        }
        past.state = outcome.state
        past.graphVersion = recorded.graphVersion
    }

    /// Applies one recorded change again, as the live service applied it: a creation on `target`
    /// (the graph version it recorded), an intent on `current` (the version the session ran on
    /// before it), an upgrade from `current` to `target`; nil for an end, which changes nothing.
    /// The one replay of a record, for a past version and for `navd check` (``JourneyCheck``).
    package static func replay(
        _ step: RecordedChange.Step, to state: SessionState, on current: GraphVersion, upgradingTo target: GraphVersion
    ) throws(NavError) -> NavCore.Outcome? {
        switch step {
        case .create(let start, let context): try target.navigator.start(at: start, context: context)
        case .intent(let intent, let confirmed): try Self.step(.intent(intent, confirmed: confirmed, on: current), to: state)
        case .upgrade: try Self.step(.upgrade(from: current.version, to: target), to: state)
        case .end: nil
        }
    }

    /// The nearest checkpoint below `version`, decoded: this process's, or the store's when it is
    /// nearer (one kept before a restart, or by another process).
    private func nearestCheckpoint(_ session: StoredSession, below version: Int) throws(ServiceError)
        -> (version: Int, graphVersion: Int, state: SessionState)?
    {
        var kept = checkpoints.base(of: session.id, below: version)
        // Checkpoints fall on multiples of the interval: one this process holds at the last
        // multiple below `version` is as near as any the store could give.
        let nearest = (version - 1) / Self.checkpointInterval * Self.checkpointInterval
        var parsed: JSONValue?
        if let durable = store as? any CheckpointStore, (kept?.version ?? 0) < nearest,
            let stored = try storeCall({ () throws(StoreError) in try durable.checkpoint(of: session.id, below: version) }),
            stored.version > (kept?.version ?? 0), let json = Self.parsedSnapshot(stored.snapshot),
            let graphVersion = json["graphVersion"]?.intValue
        {
            checkpoints.keep(session.id, version: stored.version, graphVersion: graphVersion, snapshot: stored.snapshot)
            kept = HistoryCheckpoints.Checkpoint(version: stored.version, graphVersion: graphVersion, snapshot: stored.snapshot)
            parsed = json
        }
        // A snapshot that no longer reads (its graph version removed) is no base: replay instead.
        guard let kept, let json = parsed ?? Self.parsedSnapshot(kept.snapshot),
            let graph = try? recordedGraph(session.graphName, kept.graphVersion, version: version),
            let state = try? SessionState(snapshot: json, graph: graph.graph)
        else { return nil }
        return (kept.version, kept.graphVersion, state)
    }

    /// A checkpoint's snapshot parsed as a store reads a session's: it may hold more values than
    /// a client's document may (31 screens of 32,000 tiny values), and one parsed with a request's
    /// bounds was no base, so every read of such a session replayed from its creation.
    private static func parsedSnapshot(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONValue(parsing: bytes, maximumDepth: StoredSession.snapshotDepth)
    }

    /// Keeps a checkpoint in this process and, on a durable store, in the store too, off the
    /// caller's thread (``HistoryCheckpoints/store(_:)``). Storing it is a shortcut for later, so
    /// a store that refuses it is let be: the next read replays more.
    func keepCheckpoint(_ id: String, version: Int, graphVersion: Int, state: SessionState) {
        keepCheckpoint(id, version: version, graphVersion: graphVersion, snapshot: state.snapshotBytes(graphVersion: graphVersion))
    }

    /// ``keepCheckpoint(_:version:graphVersion:state:)`` with the state's snapshot written already
    /// (``StoredSession/snapshotBytes``: the one the store wrote, where it wrote one).
    func keepCheckpoint(_ id: String, version: Int, graphVersion: Int, snapshot: [UInt8]) {
        checkpoints.keep(id, version: version, graphVersion: graphVersion, snapshot: snapshot)
        guard let durable = store as? any CheckpointStore, let feed = configuration.feed else { return }
        let maxBytes = FeedSettings.checkpointBytes(forFeedBytes: feed.maxBytes)
        checkpoints.store { () throws(StoreError) in
            try durable.keepCheckpoint(of: id, version: version, snapshot: snapshot, within: maxBytes)
        }
    }

    /// Graph version `number` of `name`, read through to the store; 410 when it was removed.
    private func recordedGraph(_ name: String, _ number: Int, version: Int) throws(ServiceError) -> GraphVersion {
        let found = try storeCall { () throws(StoreError) in try graphs.version(name, number, readingThrough: true) }
        guard let found else {
            throw Self.expired(version, "version \(number) of graph '\(name)', which version \(version) ran on, was removed")
        }
        return found
    }

    private static func expired(_ version: Int, _ detail: String) -> ServiceError {
        ServiceError(.versionExpired, "version \(version) can no longer be shown: \(detail)", param: "version")
    }
}

/// Snapshots of sessions every ``SessionService/checkpointInterval`` versions, kept by this
/// process as it writes changes (and replays them), so that a past version is rebuilt from the
/// nearest one below it. Bounded by count and by bytes (a session's snapshot can be megabytes:
/// 256 screens of 64 KiB of state each): past ``limit`` checkpoints, or past ``maxBytes`` of their
/// snapshots, the oldest kept go first; a past version without one is rebuilt from the session's
/// creation record.
///
/// A checkpoint is kept as its snapshot's JSON, decoded when a read starts from it: the bytes
/// counted are the bytes held. Kept decoded, a state of tiny values (`[0,0,…]`) held some twenty
/// times its JSON, and 32 MiB of checkpoints took 740 MB.
package final class HistoryCheckpoints: Sendable {
    package struct Checkpoint: Sendable {
        package var version: Int
        package var graphVersion: Int
        /// The session's snapshot at ``version``: what is counted against ``HistoryCheckpoints/maxBytes``.
        package var snapshot: [UInt8]
        var bytes: Int { snapshot.count }
    }

    private struct Kept {
        /// Per session, in version order.
        var sessions: [String: [Checkpoint]] = [:]
        /// Every checkpoint's session and version, oldest kept first (with those since forgotten).
        var order: [(session: String, version: Int)] = []
        var head = 0
        /// The checkpoints in ``sessions`` and their bytes.
        var count = 0
        var bytes = 0
    }

    private let kept = Mutex(Kept())
    private let replayed = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)
    private let storing = DispatchQueue(label: "navd.checkpoints")
    /// The most checkpoints kept (about 2 KB each for a plain session).
    package let limit: Int
    /// The most bytes of snapshots kept.
    package let maxBytes: Int

    package init(limit: Int = 16_384, maxBytes: Int) {
        self.limit = limit
        self.maxBytes = maxBytes
    }

    /// The checkpoints kept and their bytes (tests read it).
    package var usage: (count: Int, bytes: Int) { kept.withLock { ($0.count, $0.bytes) } }

    /// The places in the order of keeping, forgotten checkpoints' included (tests read it).
    package var ordered: Int { kept.withLock { $0.order.count - $0.head } }

    /// The changes replayed to rebuild past versions so far (tests read it).
    package var changesReplayed: Int { replayed.load(ordering: .relaxed) }

    /// The checkpoints a durable store refused to keep, or that were dropped waiting for it
    /// (tests read it).
    package var unstored: Int { refused.load(ordering: .relaxed) }

    /// The most checkpoints waiting to be written to the store; one more is dropped.
    package static let storeQueueLimit = 256

    /// Writes a checkpoint to the store on a queue of its own, one at a time: on SQLite the write
    /// takes the writing connection, which may wait for a fold's chunk, and the change that made
    /// the checkpoint must not wait for it.
    func store(_ write: @escaping @Sendable () throws(StoreError) -> Void) {
        guard waiting.add(1, ordering: .relaxed).newValue <= Self.storeQueueLimit else {
            waiting.subtract(1, ordering: .relaxed)
            refused.add(1, ordering: .relaxed)
            return
        }
        storing.async { [self] in
            do {
                try write()
            } catch {
                refused.add(1, ordering: .relaxed)
            }
            waiting.subtract(1, ordering: .relaxed)
        }
    }

    /// Returns once every checkpoint handed to the store so far is written (or refused).
    package func flush() {
        storing.sync {}
    }

    func count(replayed changes: Int) {
        replayed.add(changes, ordering: .relaxed)
    }

    /// The checkpoint of session `id` nearest below `version`.
    func base(of id: String, below version: Int) -> Checkpoint? {
        kept.withLock { kept in kept.sessions[id]?.last { $0.version < version } }
    }

    /// Keeps session `id`'s `snapshot` at `version`; one larger than ``maxBytes`` is not kept.
    func keep(_ id: String, version: Int, graphVersion: Int, snapshot: [UInt8]) {
        let bytes = snapshot.count
        guard bytes <= maxBytes else { return }
        kept.withLock { kept in
            var list = kept.sessions[id, default: []]
            guard !list.contains(where: { $0.version == version }) else { return }
            let index = list.firstIndex { $0.version > version } ?? list.count
            list.insert(Checkpoint(version: version, graphVersion: graphVersion, snapshot: snapshot), at: index)
            kept.sessions[id] = list
            kept.order.append((id, version))
            kept.count += 1
            kept.bytes += bytes
            while kept.count > limit || kept.bytes > maxBytes, kept.head < kept.order.count {
                let (oldest, at) = kept.order[kept.head]
                kept.head += 1
                guard var list = kept.sessions[oldest], let found = list.firstIndex(where: { $0.version == at }) else { continue }
                kept.count -= 1
                kept.bytes -= list.remove(at: found).bytes
                kept.sessions[oldest] = list.isEmpty ? nil : list
            }
            if kept.head > 1024, kept.head * 2 > kept.order.count {
                kept.order.removeFirst(kept.head)
                kept.head = 0
            }
            // Forgotten checkpoints leave their place in the order: once those outnumber the
            // kept, the order keeps only the kept, so it stays within twice the limit.
            if kept.order.count - kept.head > 2 * limit {
                let sessions = kept.sessions
                kept.order = kept.order[kept.head...].filter { entry in
                    sessions[entry.session]?.contains { $0.version == entry.version } == true
                }
                kept.head = 0
            }
        }
    }

    /// Forgets session `id`'s checkpoints (its records were purged, or it ended); every
    /// session's with nil.
    func forget(_ id: String?) {
        kept.withLock { kept in
            if let id {
                let list = kept.sessions.removeValue(forKey: id) ?? []
                kept.count -= list.count
                kept.bytes -= list.reduce(0) { $0 + $1.bytes }
            } else {
                kept = Kept()
            }
        }
    }
}
