import NavCore
import NavJSON

extension TourPlanner {
    /// The second way to make tours: from wherever the open tour stands, walk to the nearest
    /// target not yet covered; start a new tour instead when a target is nearer from the start.
    /// It chains targets that the shortest-route tree keeps on separate branches (a link of the
    /// screen a link opened, a deep path taken from where the last one left off). The planner
    /// keeps whichever of the two ways needs fewer steps.
    struct Greedy {
        let planner: TourPlanner
        let cover: Coverage
        let start: Outcome
        /// What the tours must cover: what the shortest-route tree's tours covered.
        let targets: Set<String>
        /// The search from the start: its routes are the shortest from the start.
        let search: Search
        var tracker: CoverTracker
        /// The most states one walk's search adds.
        let budget: Int

        init(planner: TourPlanner, cover: Coverage, start: Outcome, targets: Set<String>, search: Search) {
            self.planner = planner
            self.cover = cover
            self.start = start
            self.targets = targets
            self.search = search
            self.tracker = CoverTracker(planner: planner, cover: cover)
            self.budget = max(100, planner.stateBudget / 4)
        }

        /// The search's route from the start to the nearest target not yet covered (the first the
        /// search found, among the nearest).
        func nearestFromStart() -> [TourIntent]? {
            var best: (cost: Int, order: Int, node: Int, last: TourIntent?)?
            for target in targets.subtracting(tracker.covered) {
                let candidate: (cost: Int, order: Int, node: Int, last: TourIntent?)
                switch cover {
                case .scenes:
                    guard let node = search.firstShown[target] else { continue }
                    candidate = (search.nodes[node].depth, node, node, nil)
                case .links:
                    guard let take = search.takes[target] else { continue }
                    candidate = (search.nodes[take.from].depth + 1, take.order, take.from, take.intent)
                }
                if let current = best, (current.cost, current.order) <= (candidate.cost, candidate.order) { continue }
                best = candidate
            }
            guard let best else { return nil }
            var route: [TourIntent] = best.last.map { [$0] } ?? []
            var current: Int? = best.node
            while let index = current, let intent = search.nodes[index].intent {
                route.append(intent)
                current = search.nodes[index].parent
            }
            return route.reversed()
        }

        /// The tours; `nil` when a walk found no route to a target the tree's tours reached.
        mutating func tours() -> [Tour]? {
            var tours: [Tour] = []
            let startCovers = tracker.covers(nil, before: SessionState(), after: start.state)
            var open: (tour: Tour, state: SessionState)?
            while !targets.subtracting(tracker.covered).isEmpty {
                let fromStart = nearestFromStart()
                var route: [TourIntent]
                if let current = open, let here = nearest(from: current.state, within: fromStart?.count ?? Int.max) {
                    route = here
                } else if let fromStart {
                    if let current = open { tours.append(current.tour) }
                    let first = Tour(
                        startPath: start.state.pathText, startEvents: start.events.map(\.type.rawValue),
                        startCovers: tours.isEmpty ? startCovers : [], steps: []
                    )
                    open = (first, start.state)
                    route = fromStart
                } else {
                    return nil
                }
                guard var current = open else { return nil }
                for intent in route {
                    guard let applied = intent.intent, let outcome = try? planner.navigator.apply(applied, to: current.state) else {
                        return nil
                    }
                    current.tour.steps.append(
                        TourStep(
                            intent: intent, path: outcome.state.pathText, events: outcome.events.map(\.type.rawValue),
                            covers: tracker.covers(intent, before: current.state, after: outcome.state)
                        ))
                    current.state = outcome.state
                }
                open = current
            }
            if let current = open { tours.append(current.tour) }
            return tours
        }

        /// The fewest intents (at most `limit`) from `state` that cover a target not yet covered:
        /// breadth first over links, tabs and back, with a deep path as the first step to a scene
        /// only deep paths show.
        func nearest(from state: SessionState, within limit: Int) -> [TourIntent]? {
            struct Entry {
                var state: SessionState
                var parent: Int?
                var intent: TourIntent?
                var depth = 0
            }
            let remaining = targets.subtracting(tracker.covered)
            var entries = [Entry(state: state, parent: nil, intent: nil)]
            var seen: Set<String> = [planner.key(state)]
            func route(to entry: Int) -> [TourIntent] {
                var result: [TourIntent] = []
                var current: Int? = entry
                while let index = current, let intent = entries[index].intent {
                    result.append(intent)
                    current = entries[index].parent
                }
                return result.reversed()
            }
            func reaches(_ move: Move) -> Bool {
                switch cover {
                case .scenes: planner.shownScenes(move.outcome.state).contains { remaining.contains($0) }
                case .links: move.link.map { remaining.contains($0) } ?? false
                }
            }
            var head = 0
            var ignored: [Refusal] = []
            while head < entries.count {
                let current = head
                head += 1
                // Every route from here is longer than the limit.
                guard entries[current].depth < limit else { break }
                var moves = planner.moves(from: entries[current].state, refusals: &ignored)
                if current == 0 { moves += deepMoves(from: state, remaining: remaining) }
                for move in moves {
                    if reaches(move) { return route(to: current) + [move.intent] }
                    guard entries.count < budget, seen.insert(planner.key(move.outcome.state)).inserted else { continue }
                    entries.append(
                        Entry(state: move.outcome.state, parent: current, intent: move.intent, depth: entries[current].depth + 1))
                }
            }
            return nil
        }

        /// Deep paths from `state` to the scenes only deep paths reach that still matter.
        private func deepMoves(from state: SessionState, remaining: Set<String>) -> [Move] {
            let deepOnly = search.deepOnly
            let scenes: [String]
            switch cover {
            case .scenes:
                scenes = deepOnly.filter { remaining.contains($0) }.sorted()
            case .links:
                scenes = deepOnly.filter { scene in remaining.contains { $0.hasPrefix(scene + ":") } }.sorted()
            }
            return scenes.compactMap { scene in
                guard case .success(let (intent, outcome)) = planner.deepPath(to: scene, from: state, onTop: cover == .links) else {
                    return nil
                }
                return Move(intent: intent, link: nil, outcome: outcome)
            }
        }
    }
}
