import NavCore
import Synchronization

/// One version of a graph as the daemon serves it.
///
/// A class, immutable once made: every mutation looks its graph up, and handing out one
/// reference costs one retain where a copy of the value retained each of its parts.
final class GraphVersion: Sendable {
    let version: Int
    let document: JSONValue
    let navigator: Navigator
    let warnings: [GraphIssue]

    init(version: Int, document: JSONValue, navigator: Navigator, warnings: [GraphIssue]) {
        self.version = version
        self.document = document
        self.navigator = navigator
        self.warnings = warnings
    }

    var graph: Graph { navigator.graph }
}

/// The graphs this daemon knows, by name, every version kept so that a session keeps
/// running on the version it was created with.
final class GraphRegistry: Sendable {
    private let state: Mutex<State>
    let limits: Limits

    private struct State {
        var versions: [String: [GraphVersion]] = [:]
        var defaultName: String?
    }

    /// Reads every stored graph version, for versions another process added.
    typealias Reloader = @Sendable () throws(StoreError) -> [(document: JSONValue, version: Int)]
    private let reloader = Mutex<Reloader?>(nil)

    func setReloader(_ reload: @escaping Reloader) {
        reloader.withLock { $0 = reload }
    }

    init(limits: Limits = Limits()) {
        self.limits = limits
        self.state = Mutex(State())
    }

    /// Adds a new version of the graph the document names.
    /// - Returns: the stored version and whether the name is new.
    @discardableResult
    func add(_ document: JSONValue, expectedName: String? = nil) throws(APIError) -> (GraphVersion, created: Bool) {
        let decoded: (graph: Graph, warnings: [GraphIssue])
        do {
            decoded = try Graph.decode(document)
        } catch {
            throw APIError(.invalidGraph, "the graph has \(error.issues.filter { $0.severity == .error }.count) error(s)", issues: error.issues)
        }
        if let expectedName, decoded.graph.name != expectedName {
            let issue = GraphIssue(.invalidName, at: "/name", "the document names '\(decoded.graph.name)', the URL '\(expectedName)'")
            throw APIError(.invalidGraph, "graph name does not match the URL", issues: [issue])
        }
        let limits = self.limits
        return state.withLock { state in
            let name = decoded.graph.name
            let existing = state.versions[name] ?? []
            let version = GraphVersion(
                version: (existing.last?.version ?? 0) + 1, document: document,
                navigator: Navigator(graph: decoded.graph, limits: limits), warnings: decoded.warnings
            )
            state.versions[name] = existing + [version]
            if state.defaultName == nil { state.defaultName = name }
            return (version, existing.isEmpty)
        }
    }

    /// Restores a version read from a store, keeping its number.
    func restore(_ document: JSONValue, version: Int) throws(APIError) {
        let decoded: (graph: Graph, warnings: [GraphIssue])
        do {
            decoded = try Graph.decode(document)
        } catch {
            throw APIError(.invalidGraph, "stored graph no longer loads", issues: error.issues)
        }
        let entry = GraphVersion(version: version, document: document, navigator: Navigator(graph: decoded.graph, limits: limits), warnings: decoded.warnings)
        state.withLock { state in
            var versions = state.versions[decoded.graph.name] ?? []
            versions.removeAll { $0.version == version }
            versions.append(entry)
            versions.sort { $0.version < $1.version }
            state.versions[decoded.graph.name] = versions
        }
    }

    var defaultName: String? {
        state.withLock { $0.defaultName }
    }

    func latest(_ name: String) -> GraphVersion? {
        state.withLock { $0.versions[name]?.last }
    }

    /// A given version; with `reloading`, a miss re-reads the store's graphs once.
    func version(_ name: String, _ version: Int, reloading: Bool = false) -> GraphVersion? {
        if let found = state.withLock({ $0.versions[name]?.first { $0.version == version } }) { return found }
        guard reloading, let reload = reloader.withLock({ $0 }), let stored = try? reload() else { return nil }
        for (document, number) in stored where document["name"]?.stringValue == name && number == version {
            try? restore(document, version: number)
        }
        return state.withLock { $0.versions[name]?.first { $0.version == version } }
    }

    /// The latest version of every graph, by name.
    func all() -> [(name: String, latest: GraphVersion)] {
        state.withLock { state in
            state.versions.keys.sorted().compactMap { name in state.versions[name]?.last.map { (name, $0) } }
        }
    }
}
