import Dispatch
import NavCore
import NavJSON

/// Recorded journeys replayed offline against a candidate graph (docs/design.md, "Checking a
/// graph against recorded journeys"): each session of the candidate's graph whose records start
/// at its creation is applied again, change by change, through ``SessionService/step(_:to:)``,
/// and each answer compared with the record's.
package struct JourneyCheck: Sendable {
    /// The candidate graph; replayed sessions run on it whatever version they recorded.
    package let candidate: GraphVersion

    /// Per session, its records as read (in no particular order).
    private var sessions: [String: [RecordedChange]] = [:]
    /// Per session, the input lines of its that could not be read.
    private var unreadable: [String: [Int]] = [:]
    /// Lines that could not be read and name no session.
    private var orphanLines: [Int] = []
    /// Sessions in the order the input first named them (the report's examples follow it).
    private var order: [String] = []

    package init(candidate: GraphVersion) {
        self.candidate = candidate
    }

    /// Adds one readable record.
    package mutating func add(_ change: RecordedChange) {
        if sessions[change.session] == nil, unreadable[change.session] == nil { order.append(change.session) }
        sessions[change.session, default: []].append(change)
    }

    /// Adds an input line that could not be read: its session's, when known.
    package mutating func addUnreadable(line: Int, session: String?) {
        guard let session else { return orphanLines.append(line) }
        if sessions[session] == nil, unreadable[session] == nil { order.append(session) }
        unreadable[session, default: []].append(line)
    }

    /// Replays every session (spread over `workers` threads) and reports.
    package func run(workers: Int = 1) -> JourneyReport {
        let outcomes = ParallelMap.map(order, workers: workers) { session in
            replay(session, records: sessions[session] ?? [], unreadable: unreadable[session] ?? [])
        }
        var report = JourneyReport(orphanLines: orphanLines)
        for (session, outcome) in zip(order, outcomes) { report.add(session, outcome) }
        return report
    }

    /// What became of one session.
    package enum Outcome: Sendable {
        case agrees
        case diverges(JourneyReport.Divergence)
        case notReplayed(JourneyReport.Reason)
    }

    private func replay(_ session: String, records: [RecordedChange], unreadable: [Int]) -> Outcome {
        if let other = records.first(where: { $0.graphName != candidate.graph.name }) {
            return .notReplayed(.anotherGraph(other.graphName))
        }
        if let line = unreadable.min() { return .notReplayed(.unreadable(line: line)) }
        // The same record twice (a feed dump and a webhook's copy) counts once, in the full form
        // when the input has it.
        var byVersion: [Int: RecordedChange] = [:]
        for record in records where byVersion[record.version].map({ !$0.isFull && record.isFull }) ?? true {
            byVersion[record.version] = record
        }
        let changes = byVersion.keys.sorted().compactMap { byVersion[$0] }
        if changes.contains(where: { !$0.isFull }) { return .notReplayed(.analytics) }
        guard let first = changes.first, first.version == 1, case .create? = first.step else {
            return .notReplayed(.swept)
        }
        for (before, after) in zip(changes, changes.dropFirst()) where after.version != before.version + 1 {
            return .notReplayed(.gap(after: before.version))
        }
        var state = SessionState()
        var scene: String?
        for change in changes {
            guard let step = change.step else { return .agrees }
            // The session stays on the candidate: an upgrade is one to itself, which refits the stage.
            let answer = Result { () throws(NavError) in
                try SessionService.replay(step, to: state, on: candidate, upgradingTo: candidate)
            }
            let divergence = JourneyReport.Divergence(session: session, change: change, scene: scene)
            switch answer {
            case .failure(let error): return .diverges(divergence.refused(error))
            case .success(nil): return .agrees
            case .success(let outcome?):
                let events = outcome.events.map(\.type.rawValue)
                let path = outcome.state.pathText
                if path != change.path { return .diverges(divergence.answered(.otherPath, path: path, events: events)) }
                if events != change.events { return .diverges(divergence.answered(.otherEvents, path: path, events: events)) }
                state = outcome.state
                scene = state.top?.scene
            }
        }
        return .agrees
    }
}

/// Runs a closure over a list's elements on a few threads, keeping the list's order.
package enum ParallelMap {
    package static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], workers: Int, _ transform: @Sendable @escaping (Element) -> Result
    ) -> [Result] {
        let workers = max(1, min(workers, elements.count / 64))
        guard workers > 1 else { return elements.map(transform) }
        let chunk = (elements.count + workers - 1) / workers
        let parts = (0..<workers).map { index in
            Array(elements[min(elements.count, index * chunk)..<min(elements.count, (index + 1) * chunk)])
        }
        let results = Locked([[Result]](repeating: [], count: workers))
        DispatchQueue.concurrentPerform(iterations: workers) { index in
            let mapped = parts[index].map(transform)
            results.withLock { $0[index] = mapped }
        }
        return results.withLock { $0.flatMap { $0 } }
    }
}

extension JourneyCheck {
    /// Reads JSON lines, each a record, a CloudEvent whose `data` is one, or an array of such
    /// (a webhook's batch), parsing on `workers` threads. A line that cannot be read is counted
    /// against the session it names, if any; the answer is a message naming each such line.
    package mutating func read(lines bytes: [UInt8], workers: Int = 1) -> [String] {
        var ranges: [Range<Int>] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            ranges.append(start..<index)
            start = index + 1
        }
        if start < bytes.count { ranges.append(start..<bytes.count) }
        let read = ParallelMap.map(Array(ranges.enumerated()), workers: workers) { line, range in
            Self.records(in: bytes[range])
        }
        var messages: [String] = []
        for (index, result) in read.enumerated() {
            switch result {
            case .success(let records): for record in records { add(record) }
            case .failure(let error):
                messages.append("line \(index + 1): \(error.description)")
                addUnreadable(line: index + 1, session: error.session)
            }
        }
        return messages
    }

    /// The records on one line (none on a blank one).
    static func records(in line: ArraySlice<UInt8>) -> Result<[RecordedChange], RecordedChange.Unreadable> {
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\t") }) else {
            return .success([])
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: line)
        } catch {
            return .failure(RecordedChange.Unreadable(description: "not JSON: \(error)", session: sessionNamed(in: line)))
        }
        do {
            return .success(try records(in: value))
        } catch {
            return .failure(error)
        }
    }

    /// A record, a CloudEvent whose `data` is one, or an array of either.
    package static func records(in value: JSONValue) throws(RecordedChange.Unreadable) -> [RecordedChange] {
        if let items = value.arrayValue {
            var records: [RecordedChange] = []
            for item in items { records += try Self.records(in: item) }
            return records
        }
        guard value.objectValue != nil else { throw RecordedChange.Unreadable(description: "not a record (a JSON object)") }
        if value["specversion"] != nil {
            guard let data = value["data"], data.objectValue != nil else {
                throw RecordedChange.Unreadable(
                    description: "a CloudEvent without a record as its 'data'", session: value["subject"]?.stringValue)
            }
            return [try RecordedChange(record: data)]
        }
        return [try RecordedChange(record: value)]
    }

    /// The session a line that is not JSON names (`"session":"…"`), if it names one.
    private static func sessionNamed(in line: ArraySlice<UInt8>) -> String? {
        let key = Array(#""session":""#.utf8)
        guard line.count > key.count else { return nil }
        var index = line.startIndex
        while index + key.count <= line.endIndex {
            if line[index..<index + key.count].elementsEqual(key) {
                let start = index + key.count
                guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")), end > start else { return nil }
                return String(decoding: line[start..<end], as: UTF8.self)
            }
            index += 1
        }
        return nil
    }
}
