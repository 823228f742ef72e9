import NavCore
import NavJSON
import Synchronization

/// One version of a graph as the daemon serves it.
///
/// A class, immutable once made: every mutation looks its graph up, and handing out one
/// reference costs one retain where a copy of the value retained each of its parts.
package final class GraphVersion: Sendable {
    package let version: Int
    package let document: JSONValue
    package let navigator: Navigator
    package let warnings: [GraphIssue]
    /// What this version is estimated to hold in memory (``GraphRegistry/estimatedBytes(documentBytes:graph:)``),
    /// counted in the registry's `graph_bytes` budget while it is loaded.
    package let bytes: Int

    package init(version: Int, document: JSONValue, navigator: Navigator, warnings: [GraphIssue], bytes: Int = 0) {
        self.version = version
        self.document = document
        self.navigator = navigator
        self.warnings = warnings
        self.bytes = bytes
    }

    package var graph: Graph { navigator.graph }
}

/// The graphs this daemon knows, by name, every version kept so that a session keeps
/// running on the version it was created with.
///
/// With a ``GraphStore`` attached the store is the truth: it allocates version numbers (so a
/// number names one document in every process sharing it), and this registry caches what it
/// has read. A version is immutable, so a cached one never goes stale; only "which version is
/// the latest" can, when another process uploads: ``latest(_:)`` asks the store about a name
/// at most once per ``refreshInterval`` (one index lookup that reads no document unless there
/// is a newer version), and at once about a name it does not know.
///
/// Every loaded version counts its estimated bytes in ``memory`` (`graph_bytes`): an upload past
/// it is refused, a version read from the store (a restart, another process's upload) is
/// counted whatever it holds, and a removed version gives its bytes back (docs/design.md, "Graphs").
package final class GraphRegistry: Sendable {
    private let state: Mutex<State>
    package let limits: Limits
    /// The daemon-wide bound on loaded graph versions' bytes.
    package let memory: Budget
    /// How long the latest version of a known graph is taken from the cache before the store is
    /// asked again: the longest another process's upload can go unnoticed by `latest`.
    let refreshInterval: Double

    private struct State {
        package var versions: [String: [GraphVersion]] = [:]
        /// The first `--graph`: the default whatever the store holds.
        package var defaultName: String?
        /// Without one, the graph stored first (or, with no store, added first).
        var firstName: String?
        package var store: (any GraphStore)?
        /// When each known name's latest version was last checked against the store
        /// (monotonic seconds); only names the store holds get an entry.
        package var checked: [String: Double] = [:]
    }

    package init(limits: Limits = .defaults, refreshInterval: Double = 1, memory: Budget = Budget(resource: "graph_bytes", limit: .max)) {
        self.limits = limits
        self.refreshInterval = refreshInterval
        self.memory = memory
        self.state = Mutex(State())
    }

    /// An estimate of what a loaded version holds: the parsed document (a tree of values whose
    /// strings and dictionaries take several times their JSON text), the decoded graph and the
    /// navigator's tables, each of which repeats the names and templates; and a fixed cost per
    /// scene and link for the boxes, hash tables and shared lists. Linear in the document: no
    /// part of a version grows with scenes times links.
    package static func estimatedBytes(documentBytes: Int, graph: Graph) -> Int {
        let links = graph.links.count + graph.scenes.values.reduce(0) { $0 + $1.links.count }
        return 8 * documentBytes + 256 * (graph.scenes.count + links) + 4096
    }

    /// Makes `store` the keeper of graph versions (before any graph is added).
    package func attach(_ store: any GraphStore) {
        state.withLock { $0.store = store }
    }

    /// The default graph: the first `--graph` (``setDefault(_:)``); without one, the graph the
    /// store holds that was stored first.
    package func setDefault(_ name: String) {
        state.withLock { $0.defaultName = name }
    }

    private func decode(_ document: JSONValue) throws(ServiceError) -> (graph: Graph, warnings: [GraphIssue]) {
        do {
            return try Graph.decode(document, limits: limits)
        } catch {
            throw ServiceError(
                .invalidGraph, "the graph has \(error.issues.filter { $0.severity == .error }.count) error(s)", issues: error.issues)
        }
    }

    /// Adds the document as a new version of the graph it names, unless the latest version
    /// already is this document (then that version is answered and nothing is stored).
    /// - Returns: the version holding the document and whether the graph is new (this call
    ///   stored its version 1).
    @discardableResult
    ///
    /// - Throws: 413 `payloadTooLarge` for a document over ``Limits/maxGraphBytes``, `invalidGraph`,
    ///   and `overCapacity` when the version would take ``memory`` past its limit; then nothing
    ///   is stored.
    package func add(_ document: JSONValue, expectedName: String? = nil) throws(ServiceError) -> (GraphVersion, created: Bool) {
        // The bytes the store keeps, counted before anything of the document's size is built.
        let documentBytes = document.jsonBytes.count
        guard documentBytes <= limits.maxGraphBytes else {
            throw ServiceError(.payloadTooLarge, "the graph document is \(documentBytes) bytes of JSON (limit \(limits.maxGraphBytes))")
        }
        let decoded = try decode(document)
        let name = decoded.graph.name
        if let expectedName, name != expectedName {
            let issue = GraphIssue(.invalidName, at: "/name", "the document names '\(name)', the URL '\(expectedName)'")
            throw ServiceError(.invalidGraph, "graph name does not match the URL", issues: [issue])
        }
        let bytes = Self.estimatedBytes(documentBytes: documentBytes, graph: decoded.graph)
        guard memory.acquire(bytes) else {
            throw ServiceError(
                .overCapacity,
                "graph versions would hold more than --max-graph-memory (\(memory.limit) bytes); remove unused versions (DELETE /v1/graphs/{name}?version=N) or retry later"
            )
        }
        let limits = self.limits
        let made = GraphVersion(
            version: 0, document: document, navigator: Navigator(graph: decoded.graph, limits: limits), warnings: decoded.warnings,
            bytes: bytes
        )
        guard let store = state.withLock({ $0.store }) else {
            let added = state.withLock { state -> (GraphVersion, created: Bool, kept: Bool) in
                let existing = state.versions[name] ?? []
                if let latest = existing.last, latest.document == document { return (latest, false, false) }
                let version = GraphVersion(
                    version: (existing.last?.version ?? 0) + 1, document: document, navigator: made.navigator, warnings: made.warnings,
                    bytes: bytes
                )
                state.versions[name] = existing + [version]
                if state.firstName == nil { state.firstName = name }
                return (version, existing.isEmpty, true)
            }
            if !added.kept { memory.release(bytes) }
            return (added.0, added.created)
        }
        let allocated: (version: Int, stored: Bool)
        do {
            allocated = try store.storeGraph(document, name: name)
        } catch {
            memory.release(bytes)
            throw ServiceError(storeError: error, "could not store the graph")
        }
        let entry = insert(
            GraphVersion(version: allocated.version, document: document, navigator: made.navigator, warnings: made.warnings, bytes: bytes),
            checked: Clock.seconds(), charged: true
        )
        return (entry, allocated.stored && allocated.version == 1)
    }

    /// Keeps `entry` unless its version is already cached (then the cached one is answered).
    /// - Parameter charged: whether `entry.bytes` were already taken from ``memory`` (an upload);
    ///   otherwise a kept entry takes them whatever the budget holds (a version read from the
    ///   store is loaded, not refused). An entry not kept gives them back.
    private func insert(_ entry: GraphVersion, checked: Double? = nil, charged: Bool = false) -> GraphVersion {
        let kept = state.withLock { state in
            let name = entry.graph.name
            var versions = state.versions[name] ?? []
            let kept: GraphVersion
            if let existing = versions.first(where: { $0.version == entry.version }) {
                kept = existing
            } else {
                versions.append(entry)
                versions.sort { $0.version < $1.version }
                state.versions[name] = versions
                kept = entry
            }
            if let checked, kept === versions.last { state.checked[name] = checked }
            return kept
        }
        if kept === entry, !charged { memory.force(entry.bytes) }
        if kept !== entry, charged { memory.release(entry.bytes) }
        return kept
    }

    /// A version read back from the store. It was accepted when it was stored, maybe by a navd
    /// with larger bounds on a document's size, scenes, links or name: those bounds are for what
    /// is uploaded now, and a stored version over them still loads, so that the sessions that
    /// run on it are served (and it can be removed). It counts against ``memory`` all the same.
    private func make(_ document: JSONValue, version: Int) throws(ServiceError) -> GraphVersion {
        var stored = limits
        stored.maxGraphScenes = .max
        stored.maxGraphLinks = .max
        stored.maxGraphBytes = .max
        stored.maxGraphNameBytes = .max
        let decoded: (graph: Graph, warnings: [GraphIssue])
        do {
            decoded = try Graph.decode(document, limits: stored)
        } catch {
            throw ServiceError(.invalidGraph, "stored graph no longer loads", issues: error.issues)
        }
        return GraphVersion(
            version: version, document: document, navigator: Navigator(graph: decoded.graph, limits: limits), warnings: decoded.warnings,
            bytes: Self.estimatedBytes(documentBytes: document.jsonBytes.count, graph: decoded.graph)
        )
    }

    /// Removes a version from the store (if one is attached) and from this registry, giving its
    /// bytes back to ``memory``. The caller has checked that it is not the newest and that no
    /// session runs on it (``SessionService/removeGraphVersion(_:version:)``).
    /// - Returns: whether there was such a version.
    package func remove(_ name: String, version: Int) throws(ServiceError) -> Bool {
        var removedFromStore = false
        if let store = state.withLock({ $0.store }) {
            do {
                removedFromStore = try store.removeGraph(name, version: version)
            } catch {
                throw ServiceError(storeError: error, "could not remove the graph version")
            }
        }
        let removed = state.withLock { state -> GraphVersion? in
            guard var versions = state.versions[name], let index = versions.firstIndex(where: { $0.version == version }) else { return nil }
            let removed = versions.remove(at: index)
            state.versions[name] = versions
            return removed
        }
        if let removed { memory.release(removed.bytes) }
        return removed != nil || removedFromStore
    }

    /// Restores a version read from a store, keeping its number.
    package func restore(_ document: JSONValue, version: Int) throws(ServiceError) {
        _ = insert(try make(document, version: version))
    }

    /// The default graph's name: the first `--graph`; without one, the graph stored first
    /// (asked of the store until it holds one).
    package func defaultName() throws(ServiceError) -> String? {
        let (known, store) = state.withLock { state in (state.defaultName ?? state.firstName, state.store) }
        if let known { return known }
        guard let store else { return nil }
        let first: String?
        do {
            first = try store.firstGraphName()
        } catch {
            throw ServiceError(storeError: error, "could not read the stored graphs")
        }
        // The graph stored first stays first: the store records it once, removals aside.
        if let first { state.withLock { $0.firstName = first } }
        return first
    }

    /// The latest version of `name`, or `nil` when no process stored one. A known name is
    /// checked against the store at most once per ``refreshInterval``; an unknown one at once.
    package func latest(_ name: String) throws(ServiceError) -> GraphVersion? {
        // No graph is named otherwise (Graph.decode refuses it), so such a name never reaches a
        // store: libpq cannot take a NUL in a text parameter, and the client would get a 500.
        guard name.isValidPathName else { return nil }
        let now = Clock.seconds()
        let interval = refreshInterval
        let (cached, store) = state.withLock { state -> (GraphVersion?, (any GraphStore)?) in
            let cached = state.versions[name]?.last
            guard let store = state.store else { return (cached, nil) }
            if cached != nil {
                if let at = state.checked[name], now - at < interval { return (cached, nil) }
                // This thread asks; the others keep answering from the cache meanwhile.
                state.checked[name] = now
            }
            return (cached, store)
        }
        guard let store else { return cached }
        let newer: (document: JSONValue, version: Int)?
        do {
            newer = try store.latestGraph(name, newerThan: cached?.version ?? 0)
        } catch {
            // A known version is still a version: the write that follows reports the outage.
            if let cached { return cached }
            throw ServiceError(storeError: error, "could not read the stored graphs")
        }
        guard let newer, let entry = try? make(newer.document, version: newer.version) else { return cached }
        return insert(entry, checked: now)
    }

    /// A cached version (no store access: the hot path of every mutation).
    package func version(_ name: String, _ version: Int) -> GraphVersion? {
        state.withLock { $0.versions[name]?.first { $0.version == version } }
    }

    /// A given version; with `readingThrough`, one the cache lacks is read from the store.
    /// - Throws: when the store cannot be read.
    package func version(_ name: String, _ version: Int, readingThrough: Bool) throws(StoreError) -> GraphVersion? {
        if let found = self.version(name, version) { return found }
        guard readingThrough, name.isValidPathName, let store = state.withLock({ $0.store }),
            let document = try store.graph(name, version: version),
            let entry = try? make(document, version: version)
        else { return nil }
        return insert(entry)
    }

    /// The latest version of every graph, by name (every graph the store holds).
    package func all() -> [(name: String, latest: GraphVersion)] {
        if let store = state.withLock({ $0.store }) {
            do {
                let now = Clock.seconds()
                for (name, version) in try store.latestGraphVersions()
                where (state.withLock { $0.versions[name]?.last?.version } ?? 0) < version {
                    if let document = try store.graph(name, version: version), let entry = try? make(document, version: version) {
                        _ = insert(entry, checked: now)
                    }
                }
            } catch {
                // The cached list is still a list: an outage shows on writes and /readyz.
            }
        }
        return state.withLock { state in
            state.versions.keys.sorted().compactMap { name in state.versions[name]?.last.map { (name, $0) } }
        }
    }
}
