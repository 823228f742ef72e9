import NavCore
import NavJSON

extension TourPlanner {
    /// Turns the search's shortest-route tree into tours (``TourPlanner``), replaying every step
    /// with the engine so that each expected path and event list is the engine's own answer.
    struct Assembly {
        let planner: TourPlanner
        let cover: Coverage
        let start: Outcome
        var nodes: [Node]
        var goals: [Int] = []
        var tracker: CoverTracker
        var covered: Set<String> { tracker.covered }

        init(planner: TourPlanner, search: Search, cover: Coverage, start: Outcome) {
            self.planner = planner
            self.cover = cover
            self.start = start
            self.nodes = search.nodes
            self.tracker = CoverTracker(planner: planner, cover: cover)
            switch cover {
            case .scenes:
                goals = search.targets.compactMap { search.firstShown[$0] }
            case .links:
                for id in search.targets {
                    guard let take = search.takes[id] else { continue }
                    let key = planner.key(take.outcome.state)
                    if let child = search.index[key], nodes[child].parent == take.from, nodes[child].intent == take.intent {
                        goals.append(child)
                    } else {
                        // A link whose result the tree reaches another way (or not at all): a leaf of its own.
                        let depth = nodes[take.from].depth + 1
                        nodes.append(
                            Node(
                                state: take.outcome.state, key: key, parent: take.from, intent: take.intent, depth: depth,
                                bound: depth
                            ))
                        goals.append(nodes.count - 1)
                    }
                }
            }
        }

        /// The route from the start to `node`: node indices, the start first.
        func route(to node: Int) -> [Int] {
            var result: [Int] = [node]
            var current = node
            while let parent = nodes[current].parent {
                result.append(parent)
                current = parent
            }
            return result.reversed()
        }

        /// The leaves of the tree of routes to the goals, depth first, each node's deepest branch last.
        func leaves() -> [Int] {
            var children: [Int: [Int]] = [:]
            var needed: Set<Int> = []
            for goal in goals {
                var current = goal
                while needed.insert(current).inserted, let parent = nodes[current].parent {
                    children[parent, default: []].append(current)
                    current = parent
                }
            }
            var height: [Int: Int] = [:]
            func measure(_ node: Int) -> Int {
                if let known = height[node] { return known }
                let value = (children[node] ?? []).map { measure($0) + 1 }.max() ?? 0
                height[node] = value
                return value
            }
            var result: [Int] = []
            func visit(_ node: Int) {
                let below = (children[node] ?? []).sorted { left, right in
                    let (l, r) = (measure(left), measure(right))
                    return l != r ? l < r : left < right
                }
                if below.isEmpty { result.append(node) }
                for child in below { visit(child) }
            }
            visit(0)
            return result.filter { $0 != 0 }
        }

        /// The tours, in order; they cover what the search reached.
        mutating func tours() throws(TourPlanningError) -> [Tour] {
            var tours: [Tour] = []
            var current: (tour: Tour, state: SessionState, route: [Int])?
            for leaf in leaves() {
                let route = self.route(to: leaf)
                var from = 1
                if var open = current {
                    var common = 0
                    while common < min(open.route.count, route.count), open.route[common] == route[common] { common += 1 }
                    let fork = route[common - 1]
                    if nodes[fork].depth >= 1, let step = returnStep(from: open.state, to: nodes[fork].key) {
                        open.tour.steps.append(
                            TourStep(
                                intent: step.intent, path: step.outcome.state.pathText, events: step.outcome.events.map(\.type.rawValue),
                                covers: tracker.covers(step.intent, before: open.state, after: step.outcome.state)
                            ))
                        open.state = step.outcome.state
                        current = open
                        from = common
                    } else {
                        tours.append(open.tour)
                        current = nil
                    }
                }
                if current == nil {
                    let startCovers = tracker.covers(nil, before: SessionState(), after: start.state)
                    current = (
                        Tour(
                            startPath: start.state.pathText, startEvents: start.events.map(\.type.rawValue), startCovers: startCovers,
                            steps: []),
                        start.state, [0]
                    )
                }
                guard var open = current else { continue }
                for node in route[from...] {
                    // The planner's moves are intents, never upgrades.
                    guard let intent = nodes[node].intent, let applied = intent.intent else { continue }
                    let outcome: Outcome
                    do {
                        outcome = try planner.navigator.apply(applied, to: open.state)
                    } catch {
                        throw TourPlanningError(message: "replaying '\(intent)' was refused: \(error)")
                    }
                    guard planner.key(outcome.state) == nodes[node].key else {
                        throw TourPlanningError(message: "replaying '\(intent)' reached \(outcome.state.pathText), not \(nodes[node].key)")
                    }
                    open.tour.steps.append(
                        TourStep(
                            intent: intent, path: outcome.state.pathText, events: outcome.events.map(\.type.rawValue),
                            covers: tracker.covers(intent, before: open.state, after: outcome.state)
                        ))
                    open.state = outcome.state
                }
                open.route = route
                current = open
            }
            if let open = current { tours.append(open.tour) }
            if tours.isEmpty {
                // Nothing to cover beyond the start: one tour checks the start itself.
                let startCovers = tracker.covers(nil, before: SessionState(), after: start.state)
                tours.append(
                    Tour(
                        startPath: start.state.pathText, startEvents: start.events.map(\.type.rawValue), startCovers: startCovers, steps: []
                    ))
            }
            return tours
        }

        /// One step from `state` to a state with `key`: `back K`, or the absolute path of the fork.
        func returnStep(from state: SessionState, to key: String) -> (intent: TourIntent, outcome: Outcome)? {
            var candidates: [TourIntent] = (1..<max(1, state.screens.count)).map { .back($0) }
            if let path = nodes.first(where: { $0.key == key })?.state.pathText { candidates.append(.navigate("^" + path)) }
            for intent in candidates {
                if let applied = intent.intent, let outcome = try? planner.navigator.apply(applied, to: state), outcome.changed,
                    planner.key(outcome.state) == key
                {
                    return (intent, outcome)
                }
            }
            return nil
        }
    }
}

extension TourPlanner {
    /// The targets tours have covered so far, and which a step covers first.
    struct CoverTracker {
        let planner: TourPlanner
        let cover: Coverage
        var covered: Set<String> = []

        /// The targets a step covers first, marking them covered.
        mutating func covers(_ intent: TourIntent?, before: SessionState, after: SessionState) -> [String] {
            var result: [String] = []
            switch cover {
            case .scenes:
                for scene in planner.shownScenes(after) where covered.insert(scene).inserted { result.append(scene) }
            case .links:
                if case .apply(.link(let name, _))? = intent {
                    let id = planner.linkID(name, from: before)
                    if covered.insert(id).inserted { result.append(id) }
                }
            }
            return result
        }
    }
}
