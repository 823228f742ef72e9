import NavCore
import NavJSON

/// What ``JourneyCheck`` found: the sessions that diverge, grouped by how, and those not
/// replayed, grouped by why (docs/design.md, "Checking a graph against recorded journeys").
package struct JourneyReport: Sendable {
    /// The first step at which a session's replay answered otherwise than its record.
    package struct Divergence: Sendable {
        package enum Difference: Sendable, Hashable {
            /// Refused, with this problem code.
            case refused(String)
            case otherPath, otherEvents
        }

        package var session: String
        package var version: Int
        /// What was asked, described without a client's values.
        package var intent: String
        /// The scene of the top screen before the step; nil before a creation.
        package var scene: String?
        package var expectedPath: String?
        package var expectedEvents: [String]
        package var difference = Difference.otherPath
        /// What the replay answered: the path and events, or the refusal.
        package var actual = ""

        init(session: String, change: RecordedChange, scene: String?) {
            self.session = session
            self.version = change.version
            self.intent = change.step.map(Self.describe) ?? change.kind
            self.scene = scene
            self.expectedPath = change.path
            self.expectedEvents = change.events
        }

        func refused(_ error: NavError) -> Divergence {
            var copy = self
            copy.difference = .refused(error.code.name)
            copy.actual = "refused \(error.code.name): \(error.message)"
            return copy
        }

        func answered(_ difference: Difference, path: String, events: [String]) -> Divergence {
            var copy = self
            copy.difference = difference
            copy.actual = Self.answer(path, events)
            return copy
        }

        /// `refused CODE`, `other path`, `other events`.
        package var differenceText: String {
            switch difference {
            case .refused(let code): "refused \(code)"
            case .otherPath: "other path"
            case .otherEvents: "other events"
            }
        }

        var expected: String { Self.answer(expectedPath ?? "(none)", expectedEvents) }

        static func answer(_ path: String, _ events: [String]) -> String {
            "\(path) [\(events.joined(separator: ", "))]"
        }

        /// The intent by its kind and what names its target, never a client's values.
        static func describe(_ step: RecordedChange.Step) -> String {
            switch step {
            case .create(let start, _): "create at " + (start ?? "the graph's start")
            case .intent(let intent, let confirmed): (confirmed ? "confirm " : "") + describe(intent)
            case .upgrade: "upgrade"
            case .end: "end"
            }
        }

        static func describe(_ intent: Intent) -> String {
            switch intent {
            case .navigate(let path): "navigate \(path)"
            case .link(let name, _): "link \(name)"
            case .exit: "exit"
            case .back(let count, _): "back \(count)"
            case .setParams: "params"
            case .patchState: "state"
            case .patchContext: "context"
            case .command(_, let name, _): "command \(name)"
            case .batch(let items): "batch [" + items.map(describe).joined(separator: ", ") + "]"
            }
        }
    }

    /// Why a session was not replayed.
    package enum Reason: Sendable, Hashable {
        /// Its creation is not in the input (the sweep removed it, or the input starts later).
        case swept
        case analytics
        case anotherGraph(String)
        /// A record of it could not be read: the first such line.
        case unreadable(line: Int)
        /// A version is missing after this one.
        case gap(after: Int)

        /// The group it is counted in.
        package var group: String {
            switch self {
            case .swept: "creation not in the input (swept)"
            case .analytics: "analytics-form records (no values to replay)"
            case .anotherGraph(let name): "another graph '\(name)'"
            case .unreadable: "a record that cannot be read"
            case .gap: "a gap in versions"
            }
        }

        var detail: String? {
            switch self {
            case .unreadable(let line): "line \(line)"
            case .gap(let version): "after version \(version)"
            default: nil
            }
        }
    }

    package private(set) var checked = 0
    package private(set) var divergences: [Divergence] = []
    package private(set) var notReplayed: [(session: String, reason: Reason)] = []
    /// Unreadable lines that name no session.
    package let orphanLines: [Int]

    init(orphanLines: [Int]) {
        self.orphanLines = orphanLines
    }

    mutating func add(_ session: String, _ outcome: JourneyCheck.Outcome) {
        checked += 1
        switch outcome {
        case .agrees: break
        case .diverges(let divergence): divergences.append(divergence)
        case .notReplayed(let reason): notReplayed.append((session, reason))
        }
    }

    /// How many examples each group shows.
    package static let examples = 3

    /// The report as `navd check` prints it; its last line is always the summary.
    package var lines: [String] {
        var lines: [String] = []
        if !divergences.isEmpty {
            lines.append("diverging sessions:")
            let groups = Dictionary(grouping: divergences) { [$0.differenceText, $0.intent, $0.scene ?? ""] }
            for (key, members) in Self.largestFirst(groups) {
                let at = key[2].isEmpty ? "before the creation" : "on scene \(key[2])"
                lines.append("  \(key[0]) · \(key[1]) · \(at): \(members.count) session(s)")
                for example in members.prefix(Self.examples) {
                    lines.append("    session \(example.session) at version \(example.version):")
                    lines.append("      expected \(example.expected)")
                    lines.append("      got      \(example.actual)")
                }
            }
        }
        if !notReplayed.isEmpty || !orphanLines.isEmpty {
            lines.append("not replayed:")
            let groups = Dictionary(grouping: notReplayed) { [$0.reason.group] }
            for (key, members) in Self.largestFirst(groups) {
                let examples = members.prefix(Self.examples).map { member in
                    member.reason.detail.map { "\(member.session) (\($0))" } ?? member.session
                }
                lines.append("  \(key[0]): \(members.count) session(s), e.g. \(examples.joined(separator: ", "))")
            }
            if !orphanLines.isEmpty {
                let shown = orphanLines.prefix(10).map(String.init).joined(separator: ", ")
                lines.append(
                    "  lines unreadable (no session named): \(orphanLines.count) (line \(shown)\(orphanLines.count > 10 ? ", …" : ""))")
            }
        }
        lines.append(summary)
        return lines
    }

    /// `checked N sessions, M diverge, K not replayed`.
    package var summary: String {
        "checked \(checked) sessions, \(divergences.count) diverge, \(notReplayed.count) not replayed"
    }

    private static func largestFirst<Member>(_ groups: [[String]: [Member]]) -> [([String], [Member])] {
        groups.sorted { left, right in
            left.value.count != right.value.count ? left.value.count > right.value.count : left.key.lexicographicallyPrecedes(right.key)
        }.map { ($0.key, $0.value) }
    }
}
