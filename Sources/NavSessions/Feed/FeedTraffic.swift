/// A graph's traffic over a time range (docs/design.md, "Traffic and funnels"): its views by
/// scene, and by edge, from the scene of the top before a view to the scene after it. A view is a
/// record whose visible top after the change is another screen than before (a creation
/// included: a view with no edge).
package struct FeedTraffic: Sendable, Equatable {
    package struct Edge: Hashable, Sendable, Comparable {
        package var from: String
        package var to: String

        package init(from: String, to: String) {
            self.from = from
            self.to = to
        }

        package static func < (a: Edge, b: Edge) -> Bool { (a.from, a.to) < (b.from, b.to) }
    }

    /// Views by the scene viewed.
    package var scenes: [String: Int]
    /// Views by edge (not creations, which have no scene before).
    package var edges: [Edge: Int]

    package init(scenes: [String: Int] = [:], edges: [Edge: Int] = [:]) {
        self.scenes = scenes
        self.edges = edges
    }

    /// A view's scenes before (nil: a creation) and after: what a pass over records counts by.
    package struct Pair: Hashable, Sendable {
        package var from: String?
        package var to: String

        package init(from: String?, to: String) {
            self.from = from
            self.to = to
        }
    }

    /// The traffic of views counted by pair.
    package init(pairs: [Pair: Int]) {
        self.init()
        for (pair, count) in pairs { add(from: pair.from, to: pair.to, count: count) }
    }

    /// Counts `count` views of `to`, from `from` (nil: a creation).
    package mutating func add(from: String?, to: String, count: Int = 1) {
        scenes[to, default: 0] += count
        if let from { edges[Edge(from: from, to: to), default: 0] += count }
    }

    /// Counts `record` if it is a view of `graph` at a time in `range`.
    package mutating func add(_ record: FeedRecord, graph: String, in range: Range<Int64>) {
        guard let to = record.toScene, record.graph == graph, range.contains(record.time) else { return }
        add(from: record.fromScene, to: to)
    }
}

/// What a funnel asks (`GET /v1/graphs/{name}/funnel`): of the sessions of `graph`, how many
/// viewed `steps[0]`, then `steps[1]` within `within` ms of that view, and so on, every view in
/// `range`.
package struct FunnelQuery: Sendable, Equatable {
    package var graph: String
    package var steps: [String]
    package var within: Int64
    package var range: Range<Int64>

    package init(graph: String, steps: [String], within: Int64, range: Range<Int64>) {
        self.graph = graph
        self.steps = steps
        self.within = within
        self.range = range
    }
}

/// Counts a funnel from views handed to it in each session's order (per session by version; the
/// sessions interleaved as they come), keeping per session only when it last completed each step.
///
/// A session reaches step `i` when some view of `steps[i]` comes after a view that reached step
/// `i - 1`, at most `within` later. Of the views that reached step `i - 1` before a view, the
/// latest is the one to continue from (it is the closest), so keeping the latest per step decides
/// every later view exactly, in one pass. A view that matches several steps (a scene named twice)
/// advances at most one of them: steps are tried from the last down.
package struct FunnelCounter: Sendable {
    private let within: Int64
    private let stepCount: Int
    /// Each step scene's places in the steps, from the last.
    private let places: [String: [Int]]
    /// Each session's slot in ``times``, once it viewed the first step.
    private var slots: [String: Int] = [:]
    /// By slot, `stepCount` times: when the session last reached each step (`Int64.min`: not yet).
    private var times: [Int64] = []

    package init(steps: [String], within: Int64) {
        self.within = within
        self.stepCount = steps.count
        var places: [String: [Int]] = [:]
        for (index, scene) in steps.enumerated() { places[scene, default: []].insert(index, at: 0) }
        self.places = places
    }

    /// Whether views of `scene` matter to the funnel.
    package func isStep(_ scene: String) -> Bool { places[scene] != nil }

    /// One view of `scene` by `session` at `time`, after every view of that session handed so far.
    package mutating func add(session: String, time: Int64, scene: String) {
        guard let places = places[scene] else { return }
        let base: Int
        if let slot = slots[session] {
            base = slot * stepCount
        } else {
            // Only a view of the first step starts a session's funnel.
            guard places.last == 0 else { return }
            base = times.count
            slots[session] = base / stepCount
            times.append(contentsOf: repeatElement(.min, count: stepCount))
        }
        for place in places {
            if place == 0 {
                times[base] = time
            } else if times[base + place - 1] != .min, time - times[base + place - 1] <= within {
                times[base + place] = time
            }
        }
    }

    /// Per step, the sessions that reached it.
    package var counts: [Int] {
        var counts = [Int](repeating: 0, count: stepCount)
        for index in times.indices where times[index] != .min { counts[index % stepCount] += 1 }
        return counts
    }
}
