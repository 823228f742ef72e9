import NavJSON
import NavSnapshot
import NavWire
import PropertyBased
import Testing

@testable import NavCore

/// Properties that hold for every path and every sequence of intents, checked on generated inputs.
@Suite struct NavigatorPropertyTests {
    // MARK: Generators

    static let letters = Array("abcdefghijklmnopqrstuvwxyz_")
    /// Value characters, the ones that must be escaped among them.
    static let valueCharacters = Array("ab1,)(% é=/!#^.~-\u{1}日")

    /// Text of `count` characters from `pool`; shrinking happens on the structure around it.
    static func characters(_ pool: [Character], _ count: ClosedRange<Int>) -> Generator<String, Shrink.None<String>> {
        Generator { rng in
            String((0..<Int.random(in: count, using: &rng)).map { _ in pool[Int.random(in: 0..<pool.count, using: &rng)] })
        }
    }

    static let params = zip(characters(letters, 1...4), characters(valueCharacters, 0...6))
        .array(of: 0...3)
        .map { pairs in Dictionary(pairs, uniquingKeysWith: { first, _ in first }) }

    static let component = zip(characters(letters, 1...8), Gen<Segue>.case, Gen.bool, params)
        .map { name, segue, navigation, params in
            PathComponent(name: name, segue: segue, container: navigation ? .navigation : .none, params: params)
        }

    /// A path in canonical structural form: a root push is bare or in a navigation container, later pushes share it.
    static let path = component.array(of: 1...6).map { components in
        var path = Path(components)
        for position in path.components.indices.dropFirst() where path.components[position].segue == .push {
            path.components[position].container = .none
        }
        return path
    }

    // MARK: (a) parse(print(p)) == p

    @Test func printedPathParsesBackToItself() async {
        await propertyCheck(count: 1_000, input: Self.path) { (path: Path) throws in
            let text = path.description
            #expect(try Path.parse(text) == path, "\(text)")
            #expect(try PathExpression.parse("^" + text) == .absolute(path), "\(text)")
            // Printing is canonical: a second round gives the same text.
            #expect(try Path.parse(text).description == text)
        }
    }

    @Test func valuesSurviveEscaping() async {
        await propertyCheck(count: 500, input: Self.characters(Self.valueCharacters + Array("\u{7F}\t\n"), 0...12)) {
            (value: String) throws in
            let path = Path([PathComponent(name: "a", params: ["q": value])])
            #expect(try Path.parse(path.description).components.first?.params["q"] == value)
        }
    }

    // MARK: (b) intent sequences

    /// One generated intent, made concrete against the state it is applied to.
    enum Step: Sendable, CustomStringConvertible {
        case navigate(String)
        case link(String, [String: JSONValue])
        case back(Int)
        case exit
        /// `screen`: an index into every screen of the session, `nil` for the top, -1 for one that does not exist.
        case setParams(screen: Int?, [String: JSONValue])
        case patchState(screen: Int, JSONValue)
        /// docs/design.md, "Flows": a result handed back by exit or back, a context patch, a screen command, a batch.
        case leave(back: Int?, result: JSONValue)
        case context(JSONValue)
        case command(screen: Int, name: String, args: [String: JSONValue])
        indirect case batch([Step])

        var description: String {
            switch self {
            case .navigate(let path): "navigate \(path)"
            case .link(let name, let params): "link \(name) \(JSONValue.object(params).jsonString)"
            case .back(let count): "back \(count)"
            case .exit: "exit"
            case .setParams(let screen, let params): "setParams \(screen.map(String.init) ?? "top") \(JSONValue.object(params).jsonString)"
            case .patchState(let screen, let patch): "patchState \(screen) \(patch.jsonString)"
            case .leave(let back, let result): "\(back.map { "back \($0)" } ?? "exit") result \(result.jsonString)"
            case .context(let patch): "context \(patch.jsonString)"
            case .command(let screen, let name, let args): "command \(screen) \(name) \(JSONValue.object(args).jsonString)"
            case .batch(let steps): "batch [\(steps.map(\.description).joined(separator: "; "))]"
            }
        }

        func intent(on state: SessionState) -> Intent {
            let screens = state.allScreens
            func id(_ index: Int) -> String {
                if index == Int.max { return state.top?.id ?? "e999" }
                return index < 0 || screens.isEmpty ? "e999" : screens[index % screens.count].id
            }
            switch self {
            case .navigate(let path): return .navigate(path)
            case .link(let name, let params): return .link(name: name, params: params)
            case .back(let count): return .back(count)
            case .exit: return .exit()
            case .setParams(let screen, let params): return .setParams(screen: screen.map(id) ?? state.top?.id ?? "", params: params)
            case .patchState(let screen, let patch): return .patchState(screen: id(screen), patch: patch)
            case .leave(let back, let result): return back.map { .back($0, result: result) } ?? .exit(result: result)
            case .context(let patch): return .patchContext(patch)
            case .command(let screen, let name, let args): return .command(screen: id(screen), name: name, args: args)
            // Each item made concrete against the state before the batch: ids may go stale in it, as a client's would.
            case .batch(let steps): return .batch(steps.map { $0.intent(on: state) })
            }
        }
    }

    static let newsNames = [
        "top", "list_news", "show_news", "list_coupon", "show_coupon", "home", "friend", "show_friend", "profile", "help", "login",
        "onboarding",
        "settings", "edit_profile", "pick_category"
    ]
    static let contextPool: [JSONValue] = [
        ["user": "u2"], ["user": nil], ["user": "u1"], ["user": nil], ["user": "u3", "theme": "dark"], ["user": nil, "locale": "en"],
        [:], ["theme": nil], [1]
    ]
    static let commandPool: [(String, [String: JSONValue])] = [
        ("type", ["text": "hi"]), ("type", ["text": "ho"]), ("type", ["text": [1]]), ("type", [:]), ("save", [:]), ("save", [:]),
        ("save", ["extra": 1]), ("nosuch", [:])
    ]
    static let resultPool: [JSONValue] = [["category": 3], "picked", 7, nil, [1, [2]]]
    static let paramPool: [(String, [String])] = [
        ("category", ["0", "3", "x"]), ("id", ["1", "44", "-2"]), ("name", ["ken", "a%2Cb", ""]), ("q", ["%28", "é"])
    ]
    static let patchPool: [JSONValue] = [
        ["editing": true], ["editing": false], ["draft": ["bio": "hi"]], ["draft": nil], ["n": 2.0], ["n": 2], [:], [1], nil
    ]

    /// - Parameters:
    ///   - names: scene names to build paths from, real and unknown.
    ///   - links: link names of the graph.
    ///   - tabs: `(tabs scene, tab)` pairs of the graph, so that tab switches are common, not lucky.
    ///   - start: the graph's start path, a prefix for absolute deep links into its tabs.
    static func step(names: [String], links: [String], tabs: [(String, String)], start: String) -> Generator<Step, Shrink.None<Step>> {
        Generator { rng in
            func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &rng)] }
            func params() -> [String: JSONValue] {
                var result: [String: JSONValue] = [:]
                for _ in 0..<Int.random(in: 0...2, using: &rng) {
                    let (key, values) = pick(paramPool)
                    let text = pick(values)
                    result[key] = Int(text).map(JSONValue.int) ?? .string(text)
                }
                return result
            }
            switch Int.random(in: 0..<25, using: &rng) {
            case 0..<3 where !tabs.isEmpty:
                let (bar, tab) = pick(tabs)
                var text = pick([
                    "..#\(tab)", "../..#\(tab)", "../../..#\(tab)", "^\(start)/\(bar)#\(tab)", "^\(start)/\(bar)#\(tab)/\(pick(names))",
                    "^\(start)/\(bar)", "\(bar)#\(tab)/\(pick(names))",
                    // A tab bar at the root: going back from its tab would empty the stage.
                    "^/\(bar)#\(tab)", "^/\(bar)#\(tab)/\(pick(names))"
                ])
                if Bool.random(using: &rng) { text += pick(["!login", "!/list_coupon", "/help", "!onboarding"]) }
                return .navigate(text)
            case 0..<9:
                let prefix = pick(["", "", "^", "^", "..", "../..", "..!", "up"])
                if prefix == "up" { return .navigate(Bool.random(using: &rng) ? "up" : "up(n=\(Int.random(in: 1...3, using: &rng)))") }
                var text = prefix
                for position in 0..<Int.random(in: prefix == "..!" ? 1...3 : 0...3, using: &rng) {
                    switch (position, prefix) {
                    case (0, ""), (0, "^"): text += pick(["", "", "/", "!", "!/", "#"])
                    case (0, "..!"): break
                    case (0, _): text += pick(["/", "!", "!/", "#"])
                    default: text += pick(["/", "/", "!", "!/", "#", "#/"])
                    }
                    text += pick(names)
                    if Int.random(in: 0..<3, using: &rng) == 0 {
                        let (key, values) = pick(paramPool)
                        text += "(\(key)=\(pick(values)))"
                    }
                }
                return .navigate(text)
            case 9..<12: return .link(pick(links + ["nosuch"]), params())
            case 12..<14: return .back(Int.random(in: 0...3, using: &rng))
            case 14..<16: return Bool.random(using: &rng) ? .exit : .leave(back: pick([nil, 1, 2]), result: pick(resultPool))
            case 16..<17:
                return .setParams(screen: Int.random(in: 0..<4, using: &rng) == 0 ? Int.random(in: -1...6, using: &rng) : nil, params())
            case 17..<23:
                // The flows (docs/design.md, "Flows"): a context that lets a redirected navigation resume, a
                // command of a screen (news.json's edit_profile), a batch of any of these.
                switch Int.random(in: 0..<8, using: &rng) {
                case 0..<3: return .context(pick(contextPool))
                case 3..<5:
                    // Going to the screen that has the commands and asks before it is left.
                    return .navigate(
                        pick(["edit_profile", "edit_profile", "^/top/settings", "settings", "^/top/settings", "!pick_category"]))
                case 5..<7:
                    let (name, args) = pick(commandPool)
                    // Mostly the top screen's, where a client's buttons are.
                    return .command(
                        screen: Int.random(in: 0..<4, using: &rng) > 0 ? Int.max : Int.random(in: -1...8, using: &rng), name: name,
                        args: args)
                default:
                    var items: [Step] = []
                    for _ in 0..<Int.random(in: 0...4, using: &rng) {
                        items.append(singleStep(names: names, links: links, tabs: tabs, start: start).run(using: &rng))
                    }
                    return .batch(items)
                }
            case 23:
                // A login: what resumes a navigation redirected for want of a user.
                return .context(["user": .string(pick(["u2", "u3"]))])
            default:
                return .patchState(screen: Int.random(in: -1...8, using: &rng), pick(patchPool))
            }
        }
    }

    /// A step that is not a batch.
    static func singleStep(names: [String], links: [String], tabs: [(String, String)], start: String) -> Generator<Step, Shrink.None<Step>>
    {
        step(names: names, links: links, tabs: tabs, start: start).map { step in
            if case .batch = step { return .context(["batched": true]) }
            return step
        }
    }

    struct Subject: CustomTestStringConvertible, Sendable {
        let file: String
        var testDescription: String { file }
    }

    @Test(arguments: [Subject(file: "news.json"), Subject(file: "kabukit.json")])
    func invariantsHoldAfterEveryStep(_ subject: Subject) async throws {
        let graph = try #require(Fixtures.graph(subject.file))
        let navigator = Navigator(graph: graph, limits: Limits(maxDepth: 8))
        // Three in four names are the graph's own; the rest (news.json's) may be unknown to it.
        let own = graph.scenes.keys.sorted()
        let names = Array(repeating: own, count: 3 * Self.newsNames.count / own.count).flatMap { $0 } + Self.newsNames
        let links = Array(Set(graph.scenes.values.flatMap(\.links.keys) + graph.links.keys)).sorted()
        let tabs = graph.scenes.values.flatMap { scene in (scene.tabs ?? []).map { (scene.name, $0) } }.sorted { "\($0)" < "\($1)" }
        let start = try navigator.start(context: ["user": "u1", "locale": "ja"])
        try Self.checkInvariants(start.state, navigator: navigator)

        var tally = Tally()
        await propertyCheck(count: 500, input: Self.step(names: names, links: links, tabs: tabs, start: graph.start).array(of: 1...30)) {
            (steps: [Step]) throws in
            var state = start.state
            for (number, step) in steps.enumerated() {
                let comment = Comment(rawValue: "step \(number + 1): \(step)")
                let intent = step.intent(on: state)
                let bytes = state.snapshotBytes
                var outcome: Outcome
                var confirmed = false
                do {
                    outcome = try navigator.apply(intent, to: state)
                } catch {
                    // A refusal is an ordinary answer with a stable code and leaves the state as it was.
                    let code = (error as Any as? NavError)?.code
                    #expect(code != nil, comment)
                    #expect(state.snapshotBytes == bytes, comment)
                    tally.refused[code?.name ?? "?", default: 0] += 1
                    // A change that asks for a confirmation applies once confirmed (`POST …/confirm`).
                    guard code == .confirmationRequired, let confirmation = try? navigator.apply(intent, to: state, confirmed: true) else {
                        continue
                    }
                    #expect((error as Any as? NavError)?.screen.map { id in state.allScreens.contains { $0.id == id } } == true, comment)
                    (outcome, confirmed) = (confirmation, true)
                    tally.confirmed += 1
                }
                // The same intent on the same state without its cached text gives the same answer.
                var uncached = state
                uncached.stageText = nil
                let reference = try? navigator.apply(intent, to: uncached, confirmed: confirmed)
                #expect(reference?.events == outcome.events, comment)
                #expect(reference?.state == outcome.state, comment)
                if outcome.events.first?.type == .transitionStart {
                    #expect(reference?.state.stageText == outcome.state.stageText, comment)
                }
                try Self.checkStep(from: state, to: outcome, intent: intent, comment: comment)
                try Self.checkInvariants(outcome.state, navigator: navigator, comment: comment)
                tally.count(outcome, from: state, intent: intent)
                state = outcome.state
            }
        }
        // The generator must keep reaching the interesting cases, or the properties above prove little.
        print("\(subject.file): \(tally)")
        #expect(tally.applied > tally.steps / 8, "\(tally)")
        #expect(tally.noOps > 0, "\(tally)")
        #expect(tally.removals > 0, "\(tally)")
        #expect(tally.refused.count >= 4, "\(tally)")
        // Many navigations start from a stage whose text was kept by the one before.
        #expect(tally.fromCachedText > tally.applied / 8, "\(tally)")
        #expect(tally.results > 0, "\(tally)")
        #expect(tally.batches > 0, "\(tally)")
        if subject.file == "news.json" {
            #expect(tally.tabSwitches > 0, "\(tally)")
            #expect(tally.savedScreens > 0, "\(tally)")
            #expect(tally.redirects > 0, "\(tally)")
            #expect(tally.commands > 0, "\(tally)")
            // Each takes several steps in a row (a redirect, then a login; a form typed in, then
            // left), so each is rare (a few per run): together they are reached every run.
            // FlowTranscriptTests walks both one step at a time.
            #expect(tally.resumes + tally.confirmed > 0, "\(tally)")
        }
    }

    /// What the generated sequences did, so a generator that drifts into refusals only is noticed.
    struct Tally: CustomStringConvertible {
        var applied = 0
        /// docs/design.md, "Flows": changes applied once confirmed, redirects, resumes, results, commands and batches.
        var confirmed = 0
        var redirects = 0
        var resumes = 0
        var results = 0
        var commands = 0
        var batches = 0
        var noOps = 0
        var removals = 0
        var tabSwitches = 0
        var savedScreens = 0
        /// Transitions from a state that had its stage's text cached (`SessionState.stageText`).
        var fromCachedText = 0
        var refused: [String: Int] = [:]
        var steps: Int { applied + noOps + refused.values.reduce(0, +) }

        mutating func count(_ outcome: Outcome, from before: SessionState, intent: Intent) {
            guard outcome.changed else {
                noOps += 1
                return
            }
            applied += 1
            if outcome.state.pending != nil, outcome.state.pending != before.pending { redirects += 1 }
            let kinds = outcome.events.map(\.type)
            if case .patchContext = intent, kinds.contains(.transitionStart) { resumes += 1 }
            if kinds.contains(.result) { results += 1 }
            if outcome.events.contains(where: { if case .command = $0.detail { true } else { false } }) { commands += 1 }
            if case .batch(let items) = intent, items.count > 1 { batches += 1 }
            if before.stageText != nil, outcome.events.first?.type == .transitionStart { fromCachedText += 1 }
            if outcome.events.contains(where: { $0.type == .remove }) { removals += 1 }
            let selected = { (state: SessionState) in state.screens.compactMap { $0.tabs?.selected } }
            if selected(before) != selected(outcome.state), !selected(before).isEmpty, !selected(outcome.state).isEmpty {
                tabSwitches += 1
            }
            if outcome.state.allScreens.count > outcome.state.screens.count { savedScreens += 1 }
        }

        var description: String {
            "\(steps) steps: \(applied) applied (\(removals) with removals, \(tabSwitches) tab switches, \(savedScreens) with saved tabs, \(fromCachedText) transitions from a cached text; \(confirmed) confirmed, \(redirects) redirects, \(resumes) resumes, \(results) results, \(commands) commands, \(batches) batches of several), \(noOps) no-ops, refused \(refused.sorted { $0.key < $1.key })"
        }
    }

    /// What one applied intent may do: a no-op changes not a byte; a change is one version and
    /// consecutive events, however many steps it took (a batch, a command that navigates, a
    /// context change that resumes a navigation).
    static func checkStep(from before: SessionState, to outcome: Outcome, intent: Intent, comment: Comment) throws {
        let after = outcome.state
        guard outcome.changed else {
            #expect(after.snapshotBytes == before.snapshotBytes, comment)
            #expect(after.version == before.version, comment)
            return
        }
        #expect(after.version == before.version + 1, comment)
        #expect(outcome.events.map(\.seq) == Array(before.eventCounter + 1...before.eventCounter + outcome.events.count), comment)
        #expect(after.eventCounter == before.eventCounter + outcome.events.count, comment)
        #expect(outcome.events.allSatisfy { $0.transition == after.version }, comment)
        let kinds = outcome.events.map(\.type)
        #expect(after.context == before.context || kinds.contains(.contextChanged), comment)

        let beforeIDs = Set(before.allScreens.map(\.id))
        let afterIDs = Set(after.allScreens.map(\.id))
        let awake = outcome.events.filter { $0.type == .awake }.compactMap(\.screen)
        let removed = outcome.events.filter { $0.type == .remove }.compactMap(\.screen)
        // Exactly the new screens awake, exactly the vanished ones are removed, each once (in a
        // batch a screen may come and go again).
        #expect(afterIDs == beforeIDs.union(awake).subtracting(removed), comment)
        #expect(Set(awake).isDisjoint(with: beforeIDs), comment)
        #expect(awake.count == Set(awake).count, comment)
        #expect(removed.count == Set(removed).count, comment)
        #expect(Set(removed).isSubset(of: beforeIDs.union(awake)), comment)
        // Transitions are whole: each start has its end, and a result comes right before an end.
        var open = false
        for (index, kind) in kinds.enumerated() {
            switch kind {
            case .transitionStart:
                #expect(!open, comment)
                open = true
            case .transitionEnd:
                #expect(open, comment)
                open = false
            case .awake, .willAppear, .didAppear, .willDisappear, .didDisappear, .remove: #expect(open, comment)
            case .result: #expect(open && index + 1 < kinds.count && kinds[index + 1] == .transitionEnd, comment)
            case .paramsChanged, .stateChanged, .contextChanged, .graphChanged: #expect(!open, comment)
            }
        }
        #expect(!open, comment)
        if let pending = after.pending {
            // What waits is an absolute stage path, and only a redirect sets it.
            #expect(try Path.parse(pending).description == pending, comment)
            #expect(pending == before.pending || kinds.contains(.transitionStart), comment)
        }
        if let end = outcome.events.last, end.type == .transitionEnd {
            #expect(end.to == after.path.description, comment)
            // A transition leaves its `to` text cached for the next one's `from`.
            #expect(after.stageText == after.path.description, comment)
        }

        switch intent {
        case .navigate, .link, .exit, .back:
            #expect(kinds.first == .transitionStart, comment)
            #expect(outcome.events.first?.from == before.path.description, comment)
            let appear = outcome.events.filter { $0.type == .didAppear }
            #expect(appear.map(\.screen) == [after.top?.id], comment)
            // An applied navigation settles what was pending, unless it was itself redirected (away
            // from what is then pending).
            #expect(after.pending == nil || after.pending != after.path.description, comment)
        case .setParams, .patchState:
            #expect(kinds == [.paramsChanged] || kinds == [.stateChanged], comment)
            #expect(after.path == before.path || kinds == [.paramsChanged], comment)
            #expect(after.pending == before.pending, comment)
            // A state patch keeps the stage's text; new params make it be written again.
            #expect(after.stageText == (kinds == [.stateChanged] ? before.stageText : nil), comment)
        case .patchContext:
            #expect(kinds.first == .contextChanged, comment)
            // Either the context alone, or it and the resumed navigation, which clears `pending`.
            #expect(kinds.count == 1 || (before.pending != nil && after.pending == nil), comment)
        case .command(_, let name, _):
            #expect(outcome.events.filter { $0.type == .stateChanged }.allSatisfy { $0.detail == .command(name) }, comment)
        case .batch:
            break
        }
    }

    /// What every state must be, however it was reached.
    static func checkInvariants(_ state: SessionState, navigator: Navigator, comment: Comment? = nil) throws {
        let all = state.allScreens
        #expect(Set(all.map(\.id)).count == all.count, comment)
        for screen in all {
            let number = screen.id.hasPrefix("e") ? Int(screen.id.dropFirst()) : nil
            #expect(number.map { (1...state.screenCounter).contains($0) } == true, comment)
            #expect(navigator.graph.scenes[screen.scene] != nil, comment)
        }
        #expect(!state.screens.isEmpty, comment)
        #expect(state.screens.count <= navigator.limits.maxDepth, comment)
        #expect(try Path.parse(state.path.description) == state.path, comment)
        // The cached text of the stage, when there is one, is the stage's text.
        #expect(state.stageText == nil || state.stageText == state.path.description, comment)
        #expect(state.eventCounter >= state.version, comment)
        // A tab bar is followed by its selected tab; its saved stacks are of its other tabs.
        for (position, screen) in state.screens.enumerated() {
            guard let tabs = screen.tabs else { continue }
            let tabNames = navigator.graph.scenes[screen.scene]?.tabs ?? []
            #expect(position + 1 < state.screens.count && state.screens[position + 1].scene == tabs.selected, comment)
            #expect(position + 1 < state.screens.count && state.screens[position + 1].segue == .tab, comment)
            #expect(!tabs.saved.keys.contains(tabs.selected), comment)
            #expect(tabs.saved.keys.allSatisfy(tabNames.contains), comment)
        }
        // The actions say what the engine would do: `exit` applies exactly when they say so,
        // `back` applies with every count from 1 to theirs and with no other, every link listed
        // is one the top screen has.
        let actions = navigator.actions(for: state)
        // A change that asks for a confirmation first is still offered (the client then confirms).
        func applies(_ intent: Intent) -> Bool { (try? navigator.apply(intent, to: state, confirmed: true))?.changed == true }
        #expect(actions.exit == applies(.exit()), comment)
        #expect((1...state.screens.count + 1).filter { applies(.back($0)) } == Array(0..<actions.back).map { $0 + 1 }, comment)
        #expect(Set(actions.links.map(\.name)).count == actions.links.count, comment)
        for link in actions.links {
            let params = Dictionary(uniqueKeysWithValues: link.params.map { ($0, JSONValue.int(1)) })
            do {
                _ = try navigator.apply(.link(name: link.name, params: params), to: state)
            } catch {
                // Refused, perhaps, for its target or its values, never as a link it does not have.
                #expect(error.code != .unknownTransition, comment)
            }
        }
        // What a store writes, it can read back.
        let restored = try SessionState(
            snapshot: try JSONValue(parsing: String(decoding: state.snapshotBytes, as: UTF8.self)), graph: navigator.graph)
        #expect(restored == state, comment)
        #expect(restored.stageText == nil, comment)
    }
}
