import NavCore
import NavJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Micro-benchmarks of NavCore: each case runs `iterations` times per run, `runs` runs, and reports
// the median run in nanoseconds per operation. Pass `--quick` for a fast smoke run.

let arguments = CommandLine.arguments.dropFirst()
let quick = arguments.contains("--quick")
/// Other arguments choose cases by a word of their name (`navigate`, `parse`, …); none runs them all.
let selected = arguments.filter { !$0.hasPrefix("--") }
let runs = quick ? 3 : 9

/// Keeps a result alive so the optimiser cannot drop the work that made it.
@inline(never) func consume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Times `body` and returns the median ns/op over `runs` runs (after one warm-up run).
func measure(_ name: String, iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    guard selected.isEmpty || selected.contains(where: { name.contains($0) }) else { return .nan }
    let clock = ContinuousClock()
    let count = quick ? max(1, iterations / 20) : iterations
    for _ in 0..<count { try body() }  // warm-up
    var samples: [Double] = []
    for _ in 0..<runs {
        let elapsed = try clock.measure {
            for _ in 0..<count { try body() }
        }
        let (seconds, attoseconds) = elapsed.components
        samples.append((Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(count))
    }
    samples.sort()
    let median = samples[samples.count / 2]
    let spread = (samples.last ?? median) / (samples.first ?? median)
    let label = name + String(repeating: " ", count: max(1, 50 - name.count))
    let number = String(Int(median.rounded()))
    let column = String(repeating: " ", count: max(0, 8 - number.count)) + number
    let minimum = Int((samples.first ?? median).rounded())
    let maximum = Int((samples.last ?? median).rounded())
    let detail = "(min \(minimum), max \(maximum); \(runs) runs × \(count))"
    print("\(label)\(column) ns/op   \(detail)\(spread > 1.5 ? "  noisy" : "")")
    return median
}

// MARK: Fixtures

let graphText = #"""
    {"name": "bench", "start": "/top",
     "scenes": {
       "top":       {"links": {"news": {"path": "list_news(category={category})"}}},
       "list_news": {"params": {"category": {"type": "int", "default": 0}},
                     "links": {"show": {"path": "show_news(id={id})"}}},
       "show_news": {"params": {"id": {"type": "int", "required": true}, "ref": {"type": "string"}},
                     "state": {"read": false, "offset": 0}},
       "login":     {"inject": ["user"], "state": {"step": "password"}}
     },
     "links": {"login": {"path": "!login"}}}
    """#

guard let graph = try? Graph.decode(json: Array(graphText.utf8)).graph else {
    print("the benchmark graph does not load")
    exit(1)
}
let navigator = Navigator(graph: graph)
let context: [String: JSONValue] = ["user": "u1", "locale": "ja"]

/// A 10-screen stage: /top/list_news(category=1)/show_news(id=2)/list_news(category=3)/…
func tenScreenStage() throws -> SessionState {
    var path = "^/top"
    for position in 1..<10 {
        path += position % 2 == 1 ? "/list_news(category=\(position))" : "/show_news(id=\(position),ref=r\(position))"
    }
    let state = try navigator.start(at: path, context: context).state
    precondition(state.screens.count == 10)
    return state
}

/// A screen's wire shape as a `JSONValue` (docs/design.md, "Routes and wire shapes"), built here: NavCore no longer has an
/// encoder of its own (NavWire's writers are the daemon's, and `package` to it), and this case
/// measures building and writing a session view of that shape, as it did when `Screen.json` was
/// NavCore's.
func screenJSON(_ screen: Screen) -> JSONValue {
    var members: [String: JSONValue] = [
        "id": .string(screen.id),
        "scene": .string(screen.scene),
        "segue": .string(screen.segue.rawValue),
        "container": .string(screen.container.rawValue),
        "params": .object(screen.params.mapValues(\.json)),
        "deps": .object(screen.deps),
        "state": screen.state
    ]
    if let tabs = screen.tabs {
        members["tabs"] = [
            "selected": .string(tabs.selected),
            "saved": .object(tabs.saved.mapValues { .array($0.map(screenJSON)) })
        ]
    }
    return .object(members)
}

let sixtyCharacters = "^/top/list_news(category=1)/show_news(id=44,ref=a%2Cb)!login"
precondition(sixtyCharacters.count == 60)

// MARK: Cases

print("NavCore micro-benchmarks (release, median of \(runs) runs)")
var results: [(String, Double)] = []

do {
    results.append(
        (
            "parse 60-char path",
            try measure("parse a 60-character path", iterations: 400_000) {
                consume(try PathExpression.parse(sixtyCharacters))
            }
        ))

    let stage = try tenScreenStage()
    let stagePath = stage.path
    let relative = try PathExpression.parse("../../show_news(id=9)/list_news(category=2)")
    results.append(
        (
            "resolve relative",
            measure("resolve a relative path against 10 screens", iterations: 400_000) {
                consume(stagePath.resolving(relative))
            }
        ))

    let intent = Intent.navigate("../../../show_news(id=7)/list_news(category=8)/show_news(id=9)")
    let check = try navigator.apply(intent, to: stage)
    precondition(check.state.screens.count == 10 && check.events.count == 12, "\(check.events.count) events")
    results.append(
        (
            "3-component navigation",
            try measure("navigate: 3 components on 10 screens (+ events)", iterations: 100_000) {
                consume(try navigator.apply(intent, to: stage))
            }
        ))

    let screens = stage.screens
    results.append(
        (
            "encode session view",
            measure("encode a session view of 10 screens", iterations: 100_000) {
                var writer = JSONWriter(reservingCapacity: 4096)
                writer.write([
                    "id": "s-0123456789abcdef",
                    "graph": "bench",
                    "version": .int(stage.version),
                    "path": .string(stagePath.description),
                    "screens": .array(screens.map(screenJSON)),
                    "context": .object(context)
                ])
                consume(writer.bytes)
            }
        ))
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}

diagramCases()

print("")
let goals: [(String, Double)] = [("3-component navigation", 5_000), ("parse 60-char path", 1_000)]
for (name, limit) in goals {
    let value = results.first { $0.0 == name }?.1 ?? .nan
    guard !value.isNaN else { continue }
    print("goal \(name) ≤ \(Int(limit)) ns: \(Int(value)) ns — \(value <= limit ? "met" : "NOT met")")
}
