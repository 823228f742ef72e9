import NavCore
import NavJSON
import NavTours
import Testing

/// Tours computed for graphs, checked against NavCore applied independently.
@Suite struct TourPlannerTests {
    /// Applies every tour with a fresh navigator and returns the first step whose path or events differ.
    static func replay(_ document: TourDocument, on graph: Graph) -> String? {
        let navigator = Navigator(graph: graph)
        for (number, tour) in document.tours.enumerated() {
            guard let start = try? navigator.start(context: document.context) else { return "tour \(number): start refused" }
            if start.state.pathText != tour.startPath || start.events.map(\.type.rawValue) != tour.startEvents {
                return "tour \(number): start differs"
            }
            var state = start.state
            for (index, step) in tour.steps.enumerated() {
                guard let intent = step.intent.intent, let outcome = try? navigator.apply(intent, to: state) else {
                    return "tour \(number) step \(index): \(step.intent) refused"
                }
                if outcome.state.pathText != step.path { return "tour \(number) step \(index): path \(outcome.state.pathText)" }
                if outcome.events.map(\.type.rawValue) != step.events { return "tour \(number) step \(index): events differ" }
                state = outcome.state
            }
        }
        return nil
    }

    static func covered(_ document: TourDocument) -> [String] {
        document.tours.flatMap { $0.startCovers + $0.steps.flatMap(\.covers) }
    }

    /// Every scene and every link of the examples is covered; the tours replay on NavCore; and on
    /// these graphs the tours meet the lower bound (docs/guide.md's "Tours" table).
    @Test(arguments: ["news.json", "kabukit.json", "stopwatch.json"], Coverage.allCases)
    func examplesAreCoveredAtTheLowerBound(_ file: String, _ cover: Coverage) throws {
        let (graph, document) = try example(file)
        let plan = try TourPlanner(graph: graph, document: document).plan(cover)
        #expect(Self.replay(plan, on: graph) == nil)
        let summary = try #require(plan.summary)
        let targets =
            cover == .scenes
            ? graph.scenes.keys.sorted()
            : graph.scenes.keys.sorted().flatMap { scene in (graph.scenes[scene]?.links.keys.sorted() ?? []).map { "\(scene):\($0)" } }
                + graph.links.keys.sorted().map { "*:\($0)" }
        #expect(Self.covered(plan).sorted() == targets.sorted(), "each target covered exactly once")
        #expect(summary.targets == targets.count && summary.covered == targets.count && summary.uncovered.isEmpty)
        #expect(summary.steps == plan.tours.reduce(0) { $0 + $1.steps.count })
        #expect(summary.steps >= summary.lowerBound)
        #expect(summary.steps == summary.lowerBound, "\(file) \(cover): \(summary.steps) steps, bound \(summary.lowerBound)")
        #expect(plan.fingerprint == GraphFingerprint.of(document))
        #expect(plan.context == (graph.scenes.values.contains { !$0.requires.isEmpty } ? ["user": "tour"] : [:]))
    }

    /// Scenes links reach are reached by links; only the others take a deep path.
    @Test func deepPathsOnlyWhereNoLinkOrTabLeads() throws {
        let (graph, document) = try example("news.json")
        let plan = try TourPlanner(graph: graph, document: document).plan(.scenes)
        for step in plan.tours.flatMap(\.steps) {
            guard case .apply(.navigate) = step.intent else { continue }
            for scene in step.covers {
                #expect(
                    [
                        "help", "home", "friend", "profile", "onboarding", "show_coupon", "show_friend", "pick_category", "edit_profile",
                        "settings"
                    ]
                    .contains(scene), "\(scene) by \(step.intent)")
            }
        }
        let byLink = plan.tours.flatMap(\.steps).filter { if case .apply(.link) = $0.intent { true } else { false } }.flatMap(\.covers)
        #expect(Set(byLink) == ["list_coupon", "login", "list_news", "show_news"])
    }

    /// A tab bar reached by a deep path: its other tab by a tab switch, not another deep path.
    @Test func tabsAreSwitchedNotDeepLinked() throws {
        let (graph, document) = try graph(
            """
            {"name": "t", "start": "/a", "scenes": {"a": {}, "bar": {"container": "tabs", "tabs": ["one", "two"]},
             "one": {}, "two": {}}}
            """)
        let plan = try TourPlanner(graph: graph, document: document).plan(.scenes)
        let steps = plan.tours.flatMap(\.steps)
        #expect(steps.map(\.intent) == [.navigate("bar"), .navigate("^/a/bar#two")])
        #expect(steps.map(\.covers) == [["bar", "one"], ["two"]])
        #expect(plan.summary?.lowerBound == 2)
    }

    /// The bound on a chain is its length; on a star, its number of leaves.
    @Test(arguments: [
        (
            #"{"name": "c", "start": "/a", "scenes": {"a": {"links": {"n": {"path": "b"}}}, "b": {"links": {"n": {"path": "c"}}}, "c": {}}}"#,
            2, 2
        ),
        (
            #"{"name": "s", "start": "/r", "scenes": {"r": {"links": {"x": {"path": "x"}, "y": {"path": "!y"}, "z": {"path": "z"}}}, "x": {}, "y": {}, "z": {}}}"#,
            3, 3
        )
    ])
    func lowerBoundOfSmallGraphs(_ json: String, _ bound: Int, _ steps: Int) throws {
        let (graph, document) = try graph(json)
        let plan = try TourPlanner(graph: graph, document: document).plan(.scenes)
        #expect(plan.summary?.lowerBound == bound)
        #expect(plan.summary?.steps == steps)
        #expect(Self.replay(plan, on: graph) == nil)
    }

    /// A link refused wherever it is offered is reported, with the refusal, not toured.
    @Test func aLinkThatNeverAppliesIsUncoveredWithItsReason() throws {
        let (graph, document) = try graph(
            """
            {"name": "u", "start": "/a", "scenes": {"a": {"removable": false, "links": {"go": {"path": "b"}}}, "b": {}},
             "links": {"away": {"path": "^/b"}}}
            """)
        let plan = try TourPlanner(graph: graph, document: document).plan(.links)
        let summary = try #require(plan.summary)
        #expect(summary.covered == 1)
        #expect(summary.uncovered.map(\.target) == ["*:away"])
        #expect(summary.uncovered.first?.reason.contains("not_removable") == true, "\(summary.uncovered)")
    }

    /// Params: a default where the schema has one, a value of the param's type otherwise.
    @Test func linkParamsFollowTheSchema() throws {
        let (graph, document) = try graph(
            """
            {"name": "p", "start": "/a", "scenes": {
              "a": {"links": {"go": {"path": "b(n={n},f={f},s={s},d={d})"}}},
              "b": {"params": {"n": {"type": "int", "required": true}, "f": {"type": "bool", "required": true},
                               "s": {"type": "string", "required": true}, "d": {"type": "number", "default": 2.5}}}}}
            """)
        let plan = try TourPlanner(graph: graph, document: document).plan(.links)
        #expect(plan.tours.first?.steps.first?.intent == .link("go", params: ["n": 1, "f": true, "s": "a", "d": 2.5]))
        #expect(plan.tours.first?.steps.first?.path == "/a/b(d=2.5,f=true,n=1,s=a)")
    }

    @Test func anInvalidStartIsAnError() throws {
        let (graph, document) = try graph(#"{"name": "r", "start": "/a", "scenes": {"a": {"requires": ["k"]}}}"#)
        // `requires` keys are put in the context, so the start is entered.
        #expect(throws: Never.self) { try TourPlanner(graph: graph, document: document).plan(.scenes) }
        var limits = Limits.defaults
        limits.maxDepth = 0
        #expect(throws: TourPlanningError.self) { try TourPlanner(graph: graph, document: document, limits: limits).plan(.scenes) }
    }
}
