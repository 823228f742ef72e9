import NavCore
import NavJSON
import NavTours
import Testing

/// Tours of generated graphs (pushes, modals, modal stacks, tab bars, typed params, a
/// non-removable scene, global links): every tour replays on a fresh navigator, every target the
/// summary counts covered is covered once, the rest are listed, and no tour beats the bound.
@Suite struct GeneratedGraphTests {
    /// A small deterministic generator (SplitMix64).
    struct Generator {
        var state: UInt64

        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    static func generated(seed: UInt64) throws -> (graph: Graph, document: JSONValue) {
        var random = Generator(state: seed)
        let count = 12 + random.next(20)
        var scenes: [String: JSONValue] = [:]
        for index in 0..<count {
            var scene: [String: JSONValue] = [:]
            switch random.next(8) {
            case 0 where index + 2 < count:
                scene["container"] = "tabs"
                scene["tabs"] = [.string("s\(index + 1)"), .string("s\(index + 2)")]
            case 1:
                scene["params"] = ["id": ["type": "int", "required": true]]
            case 2:
                scene["removable"] = false
            default:
                break
            }
            var links: [String: JSONValue] = [:]
            for number in 0..<random.next(4) {
                let target = "s\(random.next(count))"
                let segue = ["", "!", "!/"][random.next(3)]
                links["l\(number)"] = ["path": .string(segue + target + "(id={id})")]
            }
            if !links.isEmpty { scene["links"] = .object(links) }
            scenes["s\(index)"] = .object(scene)
        }
        let document: JSONValue = [
            "name": "g", "start": "/s0", "scenes": .object(scenes), "links": ["home": ["path": "^/s0"]]
        ]
        return (try Graph.decode(document).graph, document)
    }

    @Test(arguments: 1...8, Coverage.allCases)
    func generatedGraphs(_ seed: Int, _ cover: Coverage) throws {
        guard let (graph, document) = try? Self.generated(seed: UInt64(seed)) else { return }
        // A small budget: the search stops early on some (`truncated`), which the rest must survive.
        let plan = try TourPlanner(graph: graph, document: document, stateBudget: 400).plan(cover)
        #expect(TourPlannerTests.replay(plan, on: graph) == nil, "seed \(seed)")
        let summary = try #require(plan.summary)
        let covered = TourPlannerTests.covered(plan)
        #expect(covered.count == Set(covered).count, "each target covered once")
        #expect(covered.count == summary.covered)
        #expect(summary.covered + summary.uncovered.count == summary.targets)
        #expect(Set(covered).isDisjoint(with: summary.uncovered.map(\.target)))
        #expect(summary.steps >= summary.lowerBound, "seed \(seed): \(summary.steps) < \(summary.lowerBound)")
        #expect(summary.steps == plan.tours.reduce(0) { $0 + $1.steps.count })
    }
}
