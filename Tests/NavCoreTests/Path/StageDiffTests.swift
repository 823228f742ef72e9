import Testing

@testable import NavCore

/// `StageDiff`, the diff rule of `Path.diff(from:to:)` and of a navigation's plan.
@Suite struct StageDiffTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let source: [String]
        let target: [String]
        let common: Int
        var testDescription: String { "\(source) → \(target)" }
    }

    @Test(arguments: [
        Case(source: [], target: [], common: 0),
        Case(source: [], target: ["a", "b"], common: 0),
        Case(source: ["a", "b"], target: [], common: 0),
        Case(source: ["a", "b", "c"], target: ["a", "b", "e", "f"], common: 2),
        Case(source: ["a", "b"], target: ["a", "b"], common: 2),
        Case(source: ["a", "b"], target: ["a", "b", "c"], common: 2),
        Case(source: ["a", "x", "c"], target: ["a", "y", "c"], common: 1),
        Case(source: ["x"], target: ["y"], common: 0)
    ])
    func theLongestCommonPrefixStays(_ test: Case) {
        let diff = StageDiff(sourceCount: test.source.count, targetCount: test.target.count) {
            test.source[$0] == test.target[$0]
        }
        #expect(diff.common == test.common)
        #expect(diff.removed == test.common..<test.source.count)
        #expect(diff.added == test.common..<test.target.count)
        #expect(diff.isEmpty == (test.source == test.target))
    }

    @Test func sameIsAskedOnlyBelowBothCountsAndStopsAtTheFirstDifference() {
        var asked: [Int] = []
        let diff = StageDiff(sourceCount: 5, targetCount: 3) { position in
            asked.append(position)
            return position < 1
        }
        #expect(diff.common == 1)
        #expect(asked == [0, 1])
        var all: [Int] = []
        _ = StageDiff(sourceCount: 5, targetCount: 3) { position in
            all.append(position)
            return true
        }
        #expect(all == [0, 1, 2])
    }
}
