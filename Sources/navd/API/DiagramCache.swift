import NavDiagram
import NavServer
import Synchronization

/// Diagrams drawn before, by graph name, version and format: a graph version never changes
/// (its number names one document in every process), so its drawing never goes stale, and
/// the open diagram route then costs a lookup instead of a layout each time it is asked.
///
/// Bounded by count and bytes; the oldest drawing leaves first. The lock is not held while
/// drawing: two first requests for one diagram may both draw it.
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

    init(maxEntries: Int = 32, maxBytes: Int = 32 << 20) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// How many drawings are kept, and their bytes.
    var usage: (entries: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }

    /// The diagram of `graph` in `format`, drawn now or before.
    func rendering(_ graph: GraphVersion, as format: DiagramFormat) -> [UInt8] {
        let key = Key(graph: graph.graph.name, version: graph.version, format: format)
        if let cached = state.withLock({ $0.entries[key] }) { return cached }
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
}
