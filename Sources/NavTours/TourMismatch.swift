/// What a daemon answered to one step of a tour, as `navd replay` read it.
public struct TourObservation: Sendable, Hashable {
    /// The canonical path of the answer's view; `nil` when the daemon refused the step.
    public var path: String?
    public var events: [String]
    /// The problem's `code` and `detail` of a refusal.
    public var refusal: Refusal?

    public struct Refusal: Sendable, Hashable {
        public var code: String
        public var detail: String
    }

    public init(path: String, events: [String]) {
        self.path = path
        self.events = events
    }

    public init(refusedWith code: String, detail: String) {
        self.path = nil
        self.events = []
        self.refusal = Refusal(code: code, detail: detail)
    }
}

/// The first difference between a tour step's expectation and the daemon's answer.
public struct TourMismatch: Sendable, Hashable, CustomStringConvertible {
    /// From 1, as people count.
    public var tour: Int
    /// From 1; 0 for the session's creation.
    public var step: Int
    public var intent: String
    public var expected: String
    public var got: String

    public init(tour: Int, step: Int, intent: String, expected: String, got: String) {
        self.tour = tour
        self.step = step
        self.intent = intent
        self.expected = expected
        self.got = got
    }

    /// One line: where, what was expected, what came.
    public var description: String {
        let place = step == 0 ? "tour \(tour), start (\(intent))" : "tour \(tour), step \(step) (\(intent))"
        return "\(place): expected \(expected), got \(got)"
    }

    /// The difference between an expected path and event types and what came; `nil` when they agree.
    public static func compare(
        tour: Int, step: Int, intent: String, path: String, events: [String], observed: TourObservation
    ) -> TourMismatch? {
        if let refusal = observed.refusal {
            return TourMismatch(
                tour: tour, step: step, intent: intent, expected: "path \(path)",
                got: "refused: \(refusal.code): \(refusal.detail)"
            )
        }
        let got = observed.path ?? ""
        if got != path {
            return TourMismatch(tour: tour, step: step, intent: intent, expected: "path \(path)", got: "path \(got)")
        }
        guard observed.events != events else { return nil }
        let first =
            (0..<min(events.count, observed.events.count)).first { events[$0] != observed.events[$0] }
            ?? min(events.count, observed.events.count)
        func listed(_ types: [String]) -> String {
            let shown = types.enumerated().map { $0.offset == first ? "▶\($0.element)" : $0.element }
            return "[" + shown.joined(separator: ", ") + (first == types.count ? ", ▶(end)" : "") + "]"
        }
        return TourMismatch(
            tour: tour, step: step, intent: intent, expected: "events \(listed(events))",
            got: "events \(listed(observed.events)) (first difference at event \(first + 1))"
        )
    }
}
