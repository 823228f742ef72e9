import NavCore
import NavJSON

/// A planning failure that is not the graph's fault (the engine answered two equal states
/// differently); reported rather than trapped.
public struct TourPlanningError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Computes tours from a graph alone, with NavCore's engine as the oracle: every step is applied
/// while planning, so its expected path and events are what the engine answers.
///
/// The search is breadth-first over session states from the start path. Its moves are the top
/// screen's links (scene and global, placeholders filled with sample values), tab switches of any
/// tab bar on the stage (`^<path to the bar>#<tab>`) and `back 1`. Scenes those moves never show
/// get one deep path from the start (pushed, as a modal, or from the root; through their tab bar
/// for a tab), and the search goes on from there. The tours follow the search's shortest-route
/// tree to every target: depth first, the deepest branch last, and where two routes part below the
/// start, one `back` (or an absolute path) returns to the fork instead of starting over.
///
/// A scene is *shown* by a state when it is the top screen's, or a tab bar's in the top
/// presentation (from the last modal up). Two states are the same when their canonical paths and
/// saved tab stacks are: screen ids and counters do not matter.
public struct TourPlanner: Sendable {
    public let graph: Graph
    /// The graph document, for the fingerprint that `navd replay` checks.
    public let document: JSONValue
    /// Each context key a scene `requires`, set to `"tour"`, so every scene can be entered.
    public let context: [String: JSONValue]
    /// The most states each phase of the search adds.
    public var stateBudget: Int
    let navigator: Navigator

    public init(graph: Graph, document: JSONValue, limits: Limits = .defaults, stateBudget: Int = 3_000) {
        self.graph = graph
        self.document = document
        self.stateBudget = stateBudget
        self.navigator = Navigator(graph: graph, limits: limits)
        let keys = Set(graph.scenes.values.flatMap(\.requires)).sorted()
        self.context = Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.string("tour")) })
    }

    /// Tours that together cover `cover`, with their summary.
    /// - Throws: ``TourPlanningError`` when the graph's start path is refused.
    public func plan(_ cover: Coverage) throws(TourPlanningError) -> TourDocument {
        let start: Outcome
        do {
            start = try navigator.start(context: context)
        } catch {
            throw TourPlanningError(message: "the start path '\(graph.start)' is refused: \(error)")
        }
        var search = Search(planner: self, cover: cover, root: start.state)
        search.run()
        var assembly = Assembly(planner: self, search: search, cover: cover, start: start)
        var tours = try assembly.tours()
        var greedy = Greedy(planner: self, cover: cover, start: start, targets: assembly.covered, search: search)
        // (Never no tour at all: one with no steps still checks the session's creation.)
        if let chained = greedy.tours(), !chained.isEmpty, greedy.tracker.covered == assembly.covered {
            func steps(_ tours: [Tour]) -> Int { tours.reduce(0) { $0 + $1.steps.count } }
            if (steps(chained), chained.count) < (steps(tours), tours.count) { tours = chained }
        }
        let summary = search.summary(tours: tours, covered: assembly.covered)
        return TourDocument(
            graphName: graph.name, fingerprint: GraphFingerprint.of(document), cover: cover, context: context,
            tours: tours, summary: summary
        )
    }

    // MARK: States and moves

    /// A move the search may make from a state, applied.
    struct Move {
        var intent: TourIntent
        /// The link id it takes (`scene:link`, `*:link`), if it is a link.
        var link: String?
        var outcome: Outcome
    }

    /// A refused or idle link, remembered to say why a link stays uncovered.
    struct Refusal {
        var link: String
        var reason: String
    }

    /// The moves that change `state`, in a fixed order: links (by name), tab switches, back.
    func moves(from state: SessionState, refusals: inout [Refusal]) -> [Move] {
        var result: [Move] = []
        let topScene = state.top.flatMap { graph.scenes[$0.scene] }
        for action in navigator.actions(for: state).links {
            let own = topScene?.links[action.name]
            guard let link = own ?? graph.links[action.name] else { continue }
            let id = own != nil ? "\(topScene?.name ?? ""):\(action.name)" : "*:\(action.name)"
            var candidates = [SampleValues.linkParams(link, graph: graph)]
            if !link.placeholders.isEmpty {
                for value in SampleValues.fallbacks {
                    candidates.append(Dictionary(uniqueKeysWithValues: link.placeholders.map { ($0, value) }))
                }
            }
            var reason = "it changes nothing where it was tried"
            for params in candidates {
                do {
                    let outcome = try navigator.apply(.link(name: action.name, params: params), to: state)
                    if outcome.changed { result.append(Move(intent: .link(action.name, params: params), link: id, outcome: outcome)) }
                    reason = ""
                    break
                } catch {
                    reason = "\(error.code.name): \(error.message)"
                }
            }
            if !reason.isEmpty { refusals.append(Refusal(link: id, reason: reason)) }
        }
        for index in state.screens.indices {
            guard let tabs = state.screens[index].tabs, let names = graph.scenes[state.screens[index].scene]?.tabs else { continue }
            let bar = Path(state.screens[...index].map(\.component)).description
            for name in names where name != tabs.selected {
                let path = "^" + bar + "#" + name
                if let outcome = try? navigator.apply(.navigate(path), to: state), outcome.changed {
                    result.append(Move(intent: .navigate(path), link: nil, outcome: outcome))
                }
            }
        }
        if state.screens.count > 1, let outcome = try? navigator.apply(.back(1), to: state), outcome.changed {
            result.append(Move(intent: .back(1), link: nil, outcome: outcome))
        }
        return result
    }

    /// The scenes `state` shows: the top screen's, and each tab bar's in the top presentation.
    func shownScenes(_ state: SessionState) -> [String] {
        guard let top = state.top else { return [] }
        let presentation = state.screens.lastIndex { $0.segue == .modal } ?? 0
        var result = state.screens[presentation...].filter { $0.tabs != nil }.map(\.scene)
        if !result.contains(top.scene) { result.append(top.scene) }
        return result
    }

    /// The link id a link intent takes from `state`.
    func linkID(_ name: String, from state: SessionState) -> String {
        if let top = state.top, graph.scenes[top.scene]?.links[name] != nil { return "\(top.scene):\(name)" }
        return "*:\(name)"
    }

    /// What identifies a state for the search: its canonical path and its saved tab stacks (by
    /// position among the session's screens), not its ids or counters.
    func key(_ state: SessionState) -> String {
        var text = state.pathText
        for (position, screen) in state.allScreens.enumerated() {
            guard let saved = screen.tabs?.saved, !saved.isEmpty else { continue }
            text += "|\(position):"
            for name in saved.keys.sorted() {
                text += name + "=" + Path((saved[name] ?? []).map(\.component)).description + ";"
            }
        }
        return text
    }

    /// Every link id of the graph: each scene's links, then the global ones.
    var allLinkIDs: [String] {
        graph.scenes.keys.sorted().flatMap { scene in
            (graph.scenes[scene]?.links.keys.sorted() ?? []).map { "\(scene):\($0)" }
        } + graph.links.keys.sorted().map { "*:\($0)" }
    }

    /// A deep path from `state` after which `scene` is shown (on top, for `onTop`), and the
    /// outcome; or the last refusal's reason.
    func deepPath(to scene: String, from state: SessionState, onTop: Bool) -> Result<(TourIntent, Outcome), DeepPathFailure> {
        guard let target = graph.scenes[scene] else { return .failure(DeepPathFailure(reason: "no such scene")) }
        let component = SampleValues.component(target)
        var candidates = [component, "!" + component, "^/" + component]
        for name in graph.scenes.keys.sorted() {
            guard let bar = graph.scenes[name], bar.tabs?.contains(scene) == true else { continue }
            let barComponent = SampleValues.component(bar)
            candidates += [barComponent + "#" + component, "!" + barComponent + "#" + component, "^/" + barComponent + "#" + component]
        }
        var reason = "no path shows it"
        for path in candidates {
            do {
                let outcome = try navigator.apply(.navigate(path), to: state)
                let shown = onTop ? [outcome.state.top?.scene ?? ""] : shownScenes(outcome.state)
                if outcome.changed, shown.contains(scene) { return .success((.navigate(path), outcome)) }
            } catch {
                reason = "\(error.code.name): \(error.message)"
            }
        }
        return .failure(DeepPathFailure(reason: reason))
    }

    struct DeepPathFailure: Error {
        var reason: String
    }
}
