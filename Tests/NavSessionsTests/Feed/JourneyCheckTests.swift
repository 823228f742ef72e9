import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// Recorded journeys replayed offline against a candidate graph (docs/design.md, "Checking a
/// graph against recorded journeys").
@Suite struct JourneyCheckTests {
    /// Sessions of several intent kinds, recorded by the service: a confirmation, a command, a
    /// batch, a context change, a state patch, params, links, back and exit.
    static func recorded() throws -> FeedRecordTests.Fixture {
        let fixture = try FeedRecordTests.Fixture()
        let first = try fixture.create(["user": "u1"])
        try fixture.apply(.link(name: "news", params: ["category": .int(2)]), first)
        try fixture.apply(.link(name: "show", params: ["id": .int(5)]), first)
        try fixture.apply(.back(1), first)
        try fixture.apply(.setParams(screen: "e2", params: ["category": .int(3)]), first)
        try fixture.apply(.patchState(screen: "e1", patch: ["editing": true]), first)
        try fixture.apply(.batch([.navigate("^/top/help"), .exit()]), first)
        try fixture.apply(.patchContext(["locale": "fr"]), first)

        let second = try fixture.create(["user": "u2"], start: "/top/edit_profile")
        try fixture.apply(.command(screen: "e2", name: "type", args: ["text": "hi"]), second)
        do {
            try fixture.apply(.navigate("^/top"), second)
            Issue.record("leaving a dirty edit_profile asks first")
        } catch let error as ServiceError {
            let token = try #require(error.confirmation?["token"]?.stringValue)
            try fixture.sessions.apply(.confirmation(token: token), to: second.id, credentials: second.owner, ifMatch: nil) { _ in }
        }
        try fixture.apply(.link(name: "news", params: ["category": .int(1)]), second)
        try fixture.sessions.delete(second.id, credentials: second.owner, ifMatch: nil)

        let third = try fixture.create([:])
        try fixture.apply(.link(name: "coupons", params: [:]), third)
        return fixture
    }

    static func lines(_ fixture: FeedRecordTests.Fixture, form: FeedForm = .full) throws -> [String] {
        try fixture.sessions.feed(from: .oldest, limit: 1000, form: form).entries.map { String(decoding: $0.json, as: UTF8.self) }
    }

    static func candidate(_ edit: (inout [String: JSONValue]) -> Void = { _ in }) throws -> GraphVersion {
        var document = try #require(try TestFixtures.graphs().latest("news")).document
        guard case .object(var members) = document else { throw NavError(.invalidRequest, "not a graph") }
        edit(&members)
        document = .object(members)
        let (graph, warnings) = try Graph.decode(document)
        return GraphVersion(version: 7, document: document, navigator: Navigator(graph: graph), warnings: warnings)
    }

    static func check(_ lines: [String], against candidate: GraphVersion) -> (JourneyReport, [String]) {
        var check = JourneyCheck(candidate: candidate)
        let messages = check.read(lines: Array(lines.joined(separator: "\n").utf8), workers: 2)
        return (check.run(workers: 2), messages)
    }

    @Test func theSameGraphReplaysEverySessionAsRecorded() throws {
        let lines = try Self.lines(try Self.recorded())
        #expect(lines.contains { $0.contains(#""kind":"confirm""#) } && lines.contains { $0.contains(#""kind":"end""#) })
        let (report, messages) = Self.check(lines, against: try Self.candidate())
        #expect(messages.isEmpty)
        #expect(report.lines == ["checked 3 sessions, 0 diverge, 0 not replayed"], "\(report.lines)")
    }

    /// A link the candidate no longer has: the sessions that followed it diverge, refused, grouped.
    @Test func aRemovedLinkIsARefusalGroupedByIntentAndScene() throws {
        let lines = try Self.lines(try Self.recorded())
        let candidate = try Self.candidate { members in
            guard case .object(var scenes)? = members["scenes"], case .object(var top)? = scenes["top"],
                case .object(var links)? = top["links"]
            else { return }
            links["news"] = nil
            top["links"] = .object(links)
            scenes["top"] = .object(top)
            members["scenes"] = .object(scenes)
        }
        let (report, _) = Self.check(lines, against: candidate)
        #expect(report.summary == "checked 3 sessions, 2 diverge, 0 not replayed")
        #expect(report.lines.contains("  refused unknown_transition · link news · on scene top: 2 session(s)"), "\(report.lines)")
        #expect(report.lines.contains { $0.hasPrefix("      expected /top/list_news(category=2) [transitionStart") }, "\(report.lines)")
    }

    /// A scene renamed: its path differs where a session reached it.
    @Test func aRenamedSceneIsAnotherPath() throws {
        let lines = try Self.lines(try Self.recorded())
        let candidate = try Self.candidate { members in
            guard case .object(var scenes)? = members["scenes"], let coupons = scenes["list_coupon"],
                case .object(var top)? = scenes["top"]
            else { return }
            scenes["list_coupon"] = nil
            scenes["coupon_list"] = coupons
            top["links"] = ["news": ["path": "list_news(category={category})"], "coupons": ["path": "!/coupon_list"]]
            scenes["top"] = .object(top)
            members["scenes"] = .object(scenes)
        }
        let (report, _) = Self.check(lines, against: candidate)
        #expect(report.summary == "checked 3 sessions, 1 diverge, 0 not replayed", "\(report.lines)")
        #expect(report.lines.contains("  other path · link coupons · on scene top: 1 session(s)"), "\(report.lines)")
        #expect(report.lines.contains { $0.hasPrefix("      got      /top!/coupon_list [") }, "\(report.lines)")
    }

    /// What cannot be replayed is counted apart, with the reason; a line that is not JSON is
    /// named by its number.
    @Test func unreplayableSessionsAreCountedWithTheirReasons() throws {
        let fixture = try Self.recorded()
        var lines = try Self.lines(fixture)
        let firstSession = try #require(try JSONValue(parsing: lines[0])["session"]?.stringValue)
        // The third session's creation is gone; the first's second record broken.
        let thirdCreation = try #require(
            lines.firstIndex { $0.contains(#""kind":"create""#) && $0.contains(#""start":null"#) && !$0.contains("u1") })
        lines.remove(at: thirdCreation)
        let cut = try #require(lines[1].range(of: #""graph""#))
        lines[1] = String(lines[1][..<cut.lowerBound])
        lines.append("{not json")
        // Another graph's session and an analytics-form one.
        let other = try #require(lines.last { $0.contains(#""kind":"end""#) })
        let otherSession = try #require(try JSONValue(parsing: other)["session"]?.stringValue)
        lines.append(
            other.replacingOccurrences(of: #""name":"news""#, with: #""name":"stopwatch""#).replacingOccurrences(
                of: otherSession, with: "stopwatchsession"))
        let analytics = try Self.lines(try Self.recorded(), form: .analytics)
        lines += analytics
        let (report, messages) = Self.check(lines, against: try Self.candidate())
        #expect(messages.contains { $0.hasPrefix("line 2: not JSON") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("line \(lines.count - analytics.count - 1): not JSON") }, "\(messages)")
        #expect(report.summary == "checked 7 sessions, 0 diverge, 6 not replayed", "\(report.lines)")
        #expect(report.lines.contains("  a record that cannot be read: 1 session(s), e.g. \(firstSession) (line 2)"), "\(report.lines)")
        #expect(report.lines.contains { $0.hasPrefix("  creation not in the input (swept): 1 session(s)") }, "\(report.lines)")
        #expect(report.lines.contains { $0.hasPrefix("  analytics-form records (no values to replay): 3 session(s)") }, "\(report.lines)")
        #expect(report.lines.contains { $0.hasPrefix("  another graph 'stopwatch': 1 session(s)") }, "\(report.lines)")
        #expect(report.lines.contains { $0.hasPrefix("  lines unreadable (no session named): 1 (line ") }, "\(report.lines)")
    }

    /// A version missing in the middle is a gap; a CloudEvent's `data` is a record.
    @Test func aGapIsNotReplayedAndCloudEventsAreRead() throws {
        let fixture = try Self.recorded()
        var lines = try Self.lines(fixture)
        lines = try lines.map { line in
            let record = try JSONValue(parsing: line)
            let event: JSONValue = [
                "specversion": "1.0", "id": record["id"] ?? .null, "subject": record["session"] ?? .null, "data": record
            ]
            return event.jsonString
        }
        // An analytics copy of every record beside the full ones (a webhook's) changes nothing.
        let (agreeing, _) = Self.check(lines + (try Self.lines(fixture, form: .analytics)), against: try Self.candidate())
        #expect(agreeing.summary == "checked 3 sessions, 0 diverge, 0 not replayed", "\(agreeing.lines)")
        lines.remove(at: 2)
        let (report, _) = Self.check(lines, against: try Self.candidate())
        #expect(
            report.lines.contains { $0.hasPrefix("  a gap in versions: 1 session(s), e.g. ") && $0.hasSuffix("(after version 2)") },
            "\(report.lines)")
    }

    /// A recorded upgrade stays on the candidate: it must leave the path as recorded.
    @Test func anUpgradeReplaysOnTheCandidate() throws {
        let fixture = try FeedRecordTests.Fixture()
        let session = try fixture.create(["user": "u1"])
        try fixture.apply(.link(name: "news", params: ["category": .int(1)]), session)
        _ = try fixture.sessions.graphs.add(try JSONValue(parsing: try TestFixtures.newsVariant("extra").bytes))
        try fixture.sessions.apply(.upgrade(version: nil), to: session.id, credentials: session.owner, ifMatch: nil) { _ in }
        try fixture.apply(.back(1), session)
        let lines = try Self.lines(fixture)
        #expect(lines.contains { $0.contains(#""kind":"upgrade""#) })
        let (report, _) = Self.check(lines, against: try Self.candidate())
        #expect(report.summary == "checked 1 sessions, 0 diverge, 0 not replayed", "\(report.lines)")
    }
}
