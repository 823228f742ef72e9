import NavCore
import NavJSON

extension TourPlanner {
    /// A state the search reached, and how.
    struct Node {
        var state: SessionState
        var key: String
        var parent: Int?
        var intent: TourIntent?
        var depth: Int
        /// A lower bound on the number of steps any route of the planner's moves needs to reach
        /// this state's key: its depth, or less when the search dropped states at a smaller depth
        /// of its phase (a dropped state could have led here sooner).
        var bound: Int
    }

    /// The first (fewest steps) application of a link the search saw.
    struct Take {
        var from: Int
        var intent: TourIntent
        var outcome: Outcome
        /// How many links were found before this one (the search's order).
        var order: Int
    }

    /// The breadth-first search over states (``TourPlanner``).
    struct Search {
        let planner: TourPlanner
        let cover: Coverage
        var nodes: [Node]
        var index: [String: Int]
        /// The first node that shows each scene.
        var firstShown: [String: Int] = [:]
        /// Scenes that were the top screen's somewhere.
        var onTop: Set<String> = []
        var takes: [String: Take] = [:]
        var refusals: [String: String] = [:]
        var deepFailures: [String: String] = [:]
        /// Scenes that only a deep path shows (or puts on top, for links).
        var deepOnly: Set<String> = []
        var truncated = false
        let targets: [String]

        init(planner: TourPlanner, cover: Coverage, root: SessionState) {
            self.planner = planner
            self.cover = cover
            let key = planner.key(root)
            nodes = [Node(state: root, key: key, parent: nil, intent: nil, depth: 0, bound: 0)]
            index = [key: 0]
            targets = cover == .scenes ? planner.graph.scenes.keys.sorted() : planner.allLinkIDs
            note(0)
        }

        var done: Bool {
            switch cover {
            case .scenes: firstShown.count == planner.graph.scenes.count
            case .links: takes.count == targets.count
            }
        }

        private mutating func note(_ node: Int) {
            let state = nodes[node].state
            for scene in planner.shownScenes(state) where firstShown[scene] == nil { firstShown[scene] = node }
            if let top = state.top { onTop.insert(top.scene) }
        }

        /// Links first, then deep paths from the start to what links and tabs never showed.
        mutating func run() {
            explore(from: [0], budget: planner.stateBudget)
            guard !done else { return }
            let needed: [String]
            switch cover {
            case .scenes:
                needed = planner.graph.scenes.keys.sorted().filter { firstShown[$0] == nil }
            case .links:
                let sources = Set(
                    targets.filter { takes[$0] == nil }.compactMap { id -> String? in
                        let scene = id.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                        return scene == "*" ? nil : scene
                    })
                needed = sources.sorted().filter { !onTop.contains($0) }
            }
            // Tab bars first (one shows its first tab too), each seed explored before the next, so
            // that tabs and links reach what they can before another deep path is taken.
            // The deep paths' searches share one budget.
            var seedBudget = planner.stateBudget
            let ordered = needed.filter { planner.graph.scenes[$0]?.tabs != nil } + needed.filter { planner.graph.scenes[$0]?.tabs == nil }
            for scene in ordered {
                if cover == .scenes, firstShown[scene] != nil { continue }
                if cover == .links, onTop.contains(scene) { continue }
                switch planner.deepPath(to: scene, from: nodes[0].state, onTop: cover == .links) {
                case .success(let (intent, outcome)):
                    let key = planner.key(outcome.state)
                    guard index[key] == nil else { continue }
                    nodes.append(Node(state: outcome.state, key: key, parent: 0, intent: intent, depth: 1, bound: 1))
                    index[key] = nodes.count - 1
                    deepOnly.insert(scene)
                    note(nodes.count - 1)
                    // A state found after a deep path may have a shorter route through a later
                    // seed: it is only known to need one step.
                    seedBudget -= explore(from: [nodes.count - 1], dropDepth: 1, budget: max(0, seedBudget))
                case .failure(let failure):
                    deepFailures[scene] = failure.reason
                }
            }
        }

        /// One phase of the breadth-first search, adding at most `budget` states.
        /// - Returns: how many states it added.
        @discardableResult
        private mutating func explore(from queue: [Int], dropDepth: Int = Int.max, budget: Int) -> Int {
            var queue = queue
            var head = 0
            var added = 0
            var dropDepth = dropDepth
            while head < queue.count, !done {
                // Once full, only links can still be found, by the states already queued.
                if added >= budget, cover == .scenes { break }
                let current = queue[head]
                head += 1
                var refused: [Refusal] = []
                for move in planner.moves(from: nodes[current].state, refusals: &refused) {
                    if let id = move.link, takes[id] == nil {
                        takes[id] = Take(from: current, intent: move.intent, outcome: move.outcome, order: takes.count)
                    }
                    let key = planner.key(move.outcome.state)
                    guard index[key] == nil else { continue }
                    let depth = nodes[current].depth + 1
                    guard added < budget else {
                        truncated = true
                        dropDepth = min(dropDepth, depth)
                        continue
                    }
                    added += 1
                    nodes.append(
                        Node(
                            state: move.outcome.state, key: key, parent: current, intent: move.intent, depth: depth,
                            bound: min(depth, dropDepth)
                        ))
                    index[key] = nodes.count - 1
                    note(nodes.count - 1)
                    queue.append(nodes.count - 1)
                }
                for refusal in refused where refusals[refusal.link] == nil { refusals[refusal.link] = refusal.reason }
            }
            return added
        }

        /// The tours' figures against the lower bound (docs/guide.md, "Tours").
        func summary(tours: [Tour], covered: Set<String>) -> TourSummary {
            let steps = tours.reduce(0) { $0 + $1.steps.count }
            let lowerBound: Int
            let reason: String
            switch cover {
            case .scenes:
                // Each step leaves exactly one screen on top, and a scene that is not a tab bar is
                // shown only on top: each such scene the start does not show needs a step of its own.
                let startShown = Set(planner.shownScenes(nodes[0].state))
                let tops = covered.filter { !startShown.contains($0) && planner.graph.scenes[$0]?.tabs == nil }.count
                let farthest = covered.compactMap { firstShown[$0].map { nodes[$0].bound } }.max() ?? 0
                lowerBound = max(tops, farthest)
                reason =
                    "max(\(tops) scenes other than tab bars to put on top beyond the start, one per step; "
                    + "\(farthest) steps to the farthest scene)"
            case .links:
                let takeDepths = covered.compactMap { takes[$0].map { nodes[$0.from].bound + 1 } }
                let farthest = takeDepths.max() ?? 0
                lowerBound = max(covered.count, farthest)
                reason = "max(\(covered.count) links, one per step; \(farthest) steps to the farthest link's first application)"
            }
            var uncovered: [Uncovered] = []
            for target in targets where !covered.contains(target) {
                uncovered.append(Uncovered(target: target, reason: uncoveredReason(target)))
            }
            return TourSummary(
                targets: targets.count, covered: covered.count, tours: tours.count, steps: steps, lowerBound: lowerBound,
                lowerBoundReason: reason, uncovered: uncovered, truncated: truncated
            )
        }

        private func uncoveredReason(_ target: String) -> String {
            switch cover {
            case .scenes:
                return "no link, tab or deep path from the start shows it (\(deepFailures[target] ?? "not tried"))"
            case .links:
                let scene = target.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
                if scene != "*", !onTop.contains(scene) {
                    return "its scene '\(scene)' is never on top (\(deepFailures[scene] ?? "no route"))"
                }
                return "it never applies with a change: \(refusals[target] ?? "hidden by a scene link of the same name")"
            }
        }
    }
}
