import NavJSON

/// A target the tours do not cover, and why.
public struct Uncovered: Sendable, Hashable {
    public var target: String
    public var reason: String

    public init(target: String, reason: String) {
        self.target = target
        self.reason = reason
    }
}

/// How the tours measure up: their steps against a lower bound on the steps any set of tours
/// covering the same targets with the same kinds of step needs (``TourPlanner``).
public struct TourSummary: Sendable, Hashable {
    public var targets: Int
    public var covered: Int
    public var tours: Int
    public var steps: Int
    public var lowerBound: Int
    /// How the lower bound was found, in a sentence.
    public var lowerBoundReason: String
    public var uncovered: [Uncovered]
    /// The search stopped at its state budget before it had seen every state it could reach.
    public var truncated: Bool

    public init(
        targets: Int, covered: Int, tours: Int, steps: Int, lowerBound: Int, lowerBoundReason: String,
        uncovered: [Uncovered], truncated: Bool
    ) {
        self.targets = targets
        self.covered = covered
        self.tours = tours
        self.steps = steps
        self.lowerBound = lowerBound
        self.lowerBoundReason = lowerBoundReason
        self.uncovered = uncovered
        self.truncated = truncated
    }
}

extension TourSummary {
    var json: JSONValue {
        [
            "targets": .int(targets), "covered": .int(covered), "tours": .int(tours), "steps": .int(steps),
            "lowerBound": .int(lowerBound), "lowerBoundReason": .string(lowerBoundReason),
            "uncovered": .array(uncovered.map { ["target": .string($0.target), "reason": .string($0.reason)] }),
            "truncated": .bool(truncated)
        ]
    }
}
