import NavDiagram
import NavSessions
import Synchronization

/// Diagrams drawn before, by graph name, version and format: a graph version never changes
/// (its number names one document in every process), so its drawing never goes stale, and
/// the open diagram route then costs a lookup instead of a layout each time it is asked.
///
/// Bounded by count and bytes; the oldest drawing leaves first. The lock is not held while
/// drawing: two first requests for one diagram may both draw it.
///
/// Drawing is heavy graph work (docs/design.md, "Heavy graph work"): only graphs of at most
/// ``maxElements`` scenes and links are drawn, small enough that every drawing fits the cache
/// (a big one is kept, not drawn again on every request), and each drawing holds a slot of the
/// `graph_work` budget while it runs.
final class DiagramCache: Sendable {
    private struct Key: Hashable {
        var graph: String
        var version: Int
        var format: DiagramFormat
    }

    private struct State {
        var entries: [Key: [UInt8]] = [:]
        /// Keys, oldest first.
        var order: [Key] = []
        var bytes = 0
    }

    private let state = Mutex(State())
    let maxEntries: Int
    let maxBytes: Int

    /// The most scenes and links (global and every scene's) a drawn graph may have.
    let maxElements: Int

    init(maxEntries: Int = 32, maxBytes: Int = 32 << 20, maxElements: Int = 5_000) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.maxElements = maxElements
    }

    /// What a drawing's work and size grow with: the graph's scenes and links.
    static func elements(of graph: GraphVersion) -> Int {
        graph.graph.scenes.count + graph.graph.links.count + graph.graph.scenes.values.reduce(0) { $0 + $1.links.count }
    }

    /// How many drawings are kept, and their bytes.
    var usage: (entries: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }

    /// The diagram of `graph` in `format`, drawn now or before.
    /// - Parameter work: the `graph_work` budget; a drawing holds one slot while it runs.
    /// - Throws: 400 `invalid_request` for a graph over ``maxElements``; 503 `over_capacity`
    ///   when every slot of `work` is taken (a drawing in the cache is answered all the same).
    func rendering(_ graph: GraphVersion, as format: DiagramFormat, work: Budget) throws(APIError) -> [UInt8] {
        let key = Key(graph: graph.graph.name, version: graph.version, format: format)
        if let cached = state.withLock({ $0.entries[key] }) { return cached }
        let elements = Self.elements(of: graph)
        guard elements <= maxElements else {
            throw APIError(
                .invalidRequest,
                "graph '\(key.graph)' version \(key.version) has \(elements) scenes and links; diagrams are drawn for at most \(maxElements)",
                param: "version"
            )
        }
        guard work.acquire() else { throw APIError.overCapacity(work) }
        defer { work.release() }
        let drawn = Diagram(graph: graph.graph).rendered(as: format)
        guard drawn.count <= maxBytes else { return drawn }
        state.withLock { state in
            guard state.entries[key] == nil else { return }
            state.entries[key] = drawn
            state.order.append(key)
            state.bytes += drawn.count
            while state.order.count > maxEntries || state.bytes > maxBytes, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= state.entries.removeValue(forKey: oldest)?.count ?? 0
            }
        }
        return drawn
    }

    /// Drops the drawings of a removed version.
    /// `graph` drawn with `traffic`, never cached (the counts change with every view), under the
    /// same bound and budget as a drawing that is.
    func rendering(_ graph: GraphVersion, as format: DiagramFormat, traffic: DiagramTraffic, work: Budget) throws(APIError) -> [UInt8] {
        let elements = Self.elements(of: graph)
        guard elements <= maxElements else {
            throw APIError(
                .invalidRequest,
                "graph '\(graph.graph.name)' version \(graph.version) has \(elements) scenes and links; diagrams are drawn for at most \(maxElements)",
                param: "version"
            )
        }
        guard work.acquire() else { throw APIError.overCapacity(work) }
        defer { work.release() }
        return Diagram(graph: graph.graph).rendered(as: format, traffic: traffic)
    }

    func forget(graph name: String, version: Int) {
        state.withLock { state in
            for key in state.order where key.graph == name && key.version == version {
                state.bytes -= state.entries.removeValue(forKey: key)?.count ?? 0
            }
            state.order.removeAll { $0.graph == name && $0.version == version }
        }
    }
}

extension APIError {
    /// 503 `over_capacity` for a daemon-wide budget that is full, with `Retry-After`.
    static func overCapacity(_ budget: Budget) -> APIError {
        APIError(ServiceError.overCapacity(budget))
    }
}
