import FuzzSupport
import NavJSON

@testable import NavCore
@testable import NavSnapshot
@testable import NavWire

/// The navigator (docs/design.md, "Transitions", "Flows"): the input is a sequence of intents applied from the start of an
/// example graph (the first byte picks news.json or kabukit.json). After every step: a refusal
/// changed nothing; an applied change is one version with consecutive events, a no-op not a byte;
/// screen ids are unique; the stage's canonical text parses back to the same stage; the
/// snapshot a store writes reads back to the same state.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNavigator(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { bytes in
        var input = FuzzInput(bytes)
        let subject = input.bool() ? Subject.kabukit : Subject.news
        var state = subject.start
        var steps = 0
        while !input.isAtEnd, steps < 32 {
            steps += 1
            let intent = subject.intent(from: &input, on: state)
            let before = state.snapshotBytes
            var outcome: Outcome
            do throws(NavError) {
                outcome = try subject.navigator.apply(intent, to: state)
            } catch {
                // A refusal is an answer with a stable code (the typed `NavError`) and leaves the state as it was.
                require(state.snapshotBytes == before, "refused \(intent) (\(error.code)) changed the state")
                // What asks for a confirmation applies once confirmed (docs/design.md, "Leave confirmation").
                guard error.code == .confirmationRequired, let confirmed = try? subject.navigator.apply(intent, to: state, confirmed: true)
                else {
                    continue
                }
                outcome = confirmed
            }
            check(outcome, of: intent, from: state, before: before, navigator: subject.navigator)
            state = outcome.state
        }
    }
    return 0
}

private func check(_ outcome: Outcome, of intent: Intent, from state: SessionState, before: [UInt8], navigator: Navigator) {
    let after = outcome.state
    guard outcome.changed else {
        require(after.snapshotBytes == before, "no-op \(intent) changed the state")
        return
    }
    require(after.version == state.version + 1, "\(intent): version \(state.version) → \(after.version)")
    require(outcome.events.allSatisfy { $0.transition == after.version }, "\(intent): an event of another version")
    if let pending = after.pending {
        require(
            (try? Path.parse(pending))?.description == pending, "\(intent): pending \(pending.debugDescription) is not a canonical path")
    }
    require(
        outcome.events.map(\.seq) == Array(state.eventCounter + 1...state.eventCounter + outcome.events.count),
        "\(intent): events not numbered from \(state.eventCounter + 1)"
    )
    let all = after.allScreens
    require(Set(all.map(\.id)).count == all.count, "\(intent): screen ids repeat in \(all.map(\.id))")
    require(!after.screens.isEmpty, "\(intent): the stage is empty")
    require(after.screens.count <= navigator.limits.maxDepth, "\(intent): \(after.screens.count) screens")
    let text = after.path.description
    require((try? Path.parse(text)) == after.path, "\(intent): the stage's text \(text.debugDescription) does not parse back to the stage")
    require(after.stageText == nil || after.stageText == text, "\(intent): cached text \(after.stageText ?? "") is not \(text)")
    for screen in all {
        require(navigator.graph.scenes[screen.scene] != nil, "\(intent): screen of unknown scene \(screen.scene)")
    }
    let restored: SessionState
    do {
        restored = try SessionState(snapshot: try JSONValue(parsing: after.snapshotBytes), graph: navigator.graph)
    } catch {
        violated("\(intent): the snapshot of \(text) does not read back: \(error)")
    }
    require(restored == after, "\(intent): the snapshot of \(text) reads back as another state")
}

/// An example graph and the vocabulary intents are built from.
private struct Subject: Sendable {
    let navigator: Navigator
    let start: SessionState
    /// Pieces of path text: the graph's scene names, an unknown one, the grammar's punctuation.
    let tokens: [String]
    let links: [String]
    let commands: [String]
    let keys: [String]

    init(_ graph: Graph) {
        navigator = Navigator(graph: graph, limits: Limits(maxDepth: 8, maxParams: 8))
        do {
            start = try navigator.start(context: ["user": "u1", "locale": "ja"]).state
        } catch {
            fatalError("the example graph \(graph.name) does not start: \(error)")
        }
        let names = graph.scenes.keys.sorted()
        let paramNames = Set(graph.scenes.values.flatMap { $0.params?.keys.map { $0 } ?? [] }).sorted()
        keys = paramNames + ["q", "a", "n", "text"]
        links = Set(graph.scenes.values.flatMap(\.links.keys) + graph.links.keys).sorted() + ["nosuch"]
        commands = Set(graph.scenes.values.flatMap(\.commands.keys)).sorted() + ["nosuch"]
        tokens =
            names + names + [
                "nosuch", "up", "/", "/", "!", "!/", "#", "^", "..", "../", "(", ")", "=", ",", "%2C", "%29", "%", "n=2", "id=1", "x", "-2",
                "0", "é"
            ]
            + paramNames.map { "(\($0)=1)" }
    }

    static let news = Subject(ExampleGraphs.news)
    static let kabukit = Subject(ExampleGraphs.kabukit)

    func intent(from input: inout FuzzInput, on state: SessionState, batching: Bool = true) -> Intent {
        switch input.below(batching ? 11 : 10) {
        case 0, 1, 2: return .navigate(path(from: &input))
        case 3: return .link(name: input.pick(links), params: params(from: &input))
        case 4: return input.bool() ? .exit() : .exit(result: value(from: &input))
        case 5:
            let count = input.byte()
            let steps = count >= 0xF8 ? Int(Int8(bitPattern: count)) : Int(count % 5)
            return input.bool() ? .back(steps) : .back(steps, result: json(from: &input))
        case 6: return .setParams(screen: screen(from: &input, on: state), params: params(from: &input))
        case 7: return .patchState(screen: screen(from: &input, on: state), patch: json(from: &input))
        case 8: return .patchContext(input.bool() ? ["user": input.bool() ? .null : .string(input.text(maximum: 4))] : json(from: &input))
        case 9: return .command(screen: screen(from: &input, on: state), name: input.pick(commands), args: params(from: &input))
        default:
            var items: [Intent] = []
            for _ in 0..<input.below(5) { items.append(intent(from: &input, on: state, batching: false)) }
            return .batch(items)
        }
    }

    /// Path text from tokens, with a raw ASCII byte now and then (bytes from 0xE0).
    func path(from input: inout FuzzInput) -> String {
        var text = ""
        for _ in 0..<input.below(16) {
            let byte = input.byte()
            if byte >= 0xE0 {
                text.unicodeScalars.append(Unicode.Scalar(byte & 0x7F))
            } else {
                text += tokens[Int(byte) % tokens.count]
            }
        }
        return text
    }

    /// The top screen's id mostly, else another screen's, one that does not exist, or raw text.
    func screen(from input: inout FuzzInput, on state: SessionState) -> String {
        let all = state.allScreens
        switch input.below(4) {
        case 0, 1: return state.top?.id ?? ""
        case 2: return all.isEmpty ? "e1" : all[input.below(all.count)].id
        default: return input.text(maximum: 8)
        }
    }

    func params(from input: inout FuzzInput) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for _ in 0..<input.below(4) {
            let key = input.bool() ? input.pick(keys) : input.text(maximum: 8)
            result[key] = value(from: &input)
        }
        return result
    }

    func value(from input: inout FuzzInput) -> JSONValue {
        switch input.below(8) {
        case 0: return .int(Int(Int8(bitPattern: input.byte())))
        case 1: return .int(input.bool() ? Int.max : Int.min)
        case 2: return .bool(input.bool())
        case 3: return .double(Double(Int8(bitPattern: input.byte())) / 4)
        case 4: return .null
        case 5: return .array([.int(1)])
        default: return .string(input.text(maximum: 12))
        }
    }

    func json(from input: inout FuzzInput) -> JSONValue {
        switch input.below(4) {
        case 0: return ["editing": .bool(input.bool())]
        case 1: return [input.pick(keys): value(from: &input), "n": .null]
        case 2: return .object(params(from: &input))
        default: return (try? JSONValue(parsing: input.text(maximum: 64).utf8)) ?? .null
        }
    }
}
