import NavCore
import NavJSON
import Testing

@testable import NavSessions

/// The memory store counts a session in `session_bytes` by ``SessionState/memoryEstimate``,
/// worked out from the decoded values: it must be at least what decoding such a state allocates,
/// whatever its shape (64 KB of tiny values decode to megabytes), and not far above it.
@Suite struct MemoryEstimateTests {
    /// What decoding `value` must allocate, at least: each value its slot in its container, each
    /// array or object an allocation with a header, each string of more than 15 bytes one of its own.
    static func floor(_ value: JSONValue) -> Int {
        let slot = MemoryLayout<JSONValue>.stride
        switch value {
        case .array(let items): return 32 + items.reduce(0) { $0 + slot + floor($1) }
        case .object(let members): return 32 + members.reduce(0) { $0 + 16 + slot + $1.key.utf8.count + floor($1.value) }
        case .string(let text): return text.utf8.count > 15 ? 32 + text.utf8.count : 0
        default: return 0
        }
    }

    @Test(arguments: ["0,", "[0],", "{\"a\":0},", "\"ab\",", "\"" + String(repeating: "x", count: 60) + "\","])
    func aStateIsCountedForWhatDecodingItMustTake(_ element: String) throws {
        let value = try JSONValue(
            parsing: Array(("[" + String(repeating: element, count: 64_000 / element.utf8.count).dropLast() + "]").utf8))
        let least = Self.floor(value)
        for state in [
            SessionState(screens: [Screen(id: "e1", scene: "top", segue: .push, container: .navigation, state: .object(["v": value]))]),
            SessionState(screens: [Screen(id: "e1", scene: "top", segue: .push, container: .navigation)], context: ["v": value])
        ] {
            let counted = state.memoryEstimate
            #expect(counted >= least, "counted \(counted) bytes for a state that takes at least \(least)")
            #expect(counted <= 8 * least, "counted \(counted) bytes for a state that takes at least \(least)")
        }
    }

    /// Every place a session keeps values counts: saved tab stacks, params and dependencies too.
    @Test func everyPartOfTheStageCounts() {
        let blob = JSONValue.string(String(repeating: "x", count: 10_000))
        let plain = SessionState(screens: [Screen(id: "e1", scene: "top", segue: .push, container: .navigation)])
        let base = plain.memoryEstimate
        let saved = Screen(id: "e2", scene: "inner", segue: .push, container: .navigation, state: .object(["v": blob]))
        let variants = [
            SessionState(screens: [Screen(id: "e1", scene: "top", segue: .push, container: .navigation, deps: ["v": blob])]),
            SessionState(screens: [
                Screen(
                    id: "e1", scene: "top", segue: .push, container: .navigation,
                    params: ["v": .string(String(repeating: "y", count: 10_000))])
            ]),
            SessionState(screens: [
                Screen(
                    id: "e1", scene: "top", segue: .push, container: .navigation, tabs: TabsState(selected: "a", saved: ["b": [saved]]))
            ]),
            SessionState(screens: plain.screens, pending: String(repeating: "/p", count: 5_000))
        ]
        for state in variants { #expect(state.memoryEstimate >= base + 10_000, "\(state)") }
    }
}
