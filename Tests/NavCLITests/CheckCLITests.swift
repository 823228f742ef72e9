import Foundation
import NavJSON
import Testing

@testable import NavCLI
@testable import NavTestSupport

/// `navd check`: sessions recorded on a running daemon, dumped with `navd feed --full` or read
/// from its feed, replayed against candidate graphs (docs/guide.md, "Checking a graph before you
/// ship it").
@Suite struct CheckCLITests {
    static let admin = "check-admin-token"

    /// A daemon serving news and stopwatch, with sessions of several intent kinds recorded.
    static func recordedDaemon() throws -> DaemonHarness {
        let daemon = try DaemonHarness(
            graphs: ["Examples/news.json", "Examples/stopwatch.json"], arguments: ["--admin-token", admin])
        let reader = try daemon.createSession(context: ["user": "u1"])
        #expect(try daemon.transition(reader, "news", params: ["category": 2]).status == 200)
        #expect(try daemon.transition(reader, "show", params: ["id": 5]).status == 200)
        #expect(try daemon.back(reader).status == 200)
        #expect(try daemon.setParams(reader, screen: "e2", ["category": 3]).status == 200)
        #expect(try daemon.navigate(reader, "^/top/help").status == 200)
        let batch: JSON = ["intents": [["navigate": "^/top"], ["link": "coupons"]]]
        #expect(try daemon.send("POST", reader.url + "/intents", json: batch, token: reader.token).status == 200)

        let editor = try daemon.createSession(start: "/top/edit_profile", context: ["user": "u2"])
        let typed = try daemon.send(
            "POST", editor.url + "/screens/e2/commands", json: ["name": "type", "args": ["text": "hi"]], token: editor.token)
        #expect(typed.status == 200)
        let asked = try daemon.navigate(editor, "^/top")
        #expect(asked.status == 409)
        let token = try #require(try asked.json()["confirmation"]?["token"]?.string)
        #expect(try daemon.send("POST", editor.url + "/confirm", json: ["token": .string(token)], token: editor.token).status == 200)
        #expect(
            try daemon.send(
                "PATCH", editor.url + "/context", json: ["locale": "fr"], token: editor.token, contentType: "application/merge-patch+json"
            ).status == 200)
        #expect(try daemon.send("DELETE", editor.url, token: editor.token).status == 204)

        let visitor = try daemon.createSession()
        #expect(try daemon.transition(visitor, "news", params: ["category": 1]).status == 200)
        #expect(try daemon.patchState(visitor, screen: "e1", ["editing": true]).status == 200)
        _ = try daemon.createSession(graph: "stopwatch")
        return daemon
    }

    /// `navd feed --full` (or the analytics form) of the daemon, into `name` in the CLI's directory.
    static func dump(_ daemon: DaemonHarness, _ cli: CLIProcess, full: Bool = true, to name: String) throws -> [String] {
        let feed = try cli.run(["feed", "--url", "http://127.0.0.1:\(daemon.port)", "--token", admin] + (full ? ["--full"] : []))
        #expect(feed.status == 0, "\(feed)")
        try feed.output.write(to: cli.directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        return feed.output.split(separator: "\n").map(String.init)
    }

    /// `Examples/news.json` changed by `edit`, written into the CLI's directory as `name`.
    static func candidate(_ cli: CLIProcess, _ name: String, _ edit: (inout String) -> Void) throws -> String {
        var text = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"), encoding: .utf8)
        edit(&text)
        try text.write(to: cli.directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        return name
    }

    static var news: String { DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json").path }

    @Test func theGraphTheSessionsRanOnAgreesAndChangedOnesDiverge() throws {
        let daemon = try Self.recordedDaemon()
        let cli = try CLIProcess()
        defer { cli.remove() }
        let lines = try Self.dump(daemon, cli, to: "feed.jsonl")
        #expect(lines.contains { $0.contains(#""kind":"confirm""#) })

        let same = try cli.run(["check", Self.news, "--journeys", "feed.jsonl"])
        #expect(same.status == 0, "\(same)")
        #expect(same.output.split(separator: "\n").last == "checked 4 sessions, 0 diverge, 1 not replayed", "\(same)")
        #expect(same.output.contains("  another graph 'stopwatch': 1 session(s)"), "\(same)")

        // Without the link `news` of `top`, the two sessions that followed it diverge.
        let unlinked = try Self.candidate(cli, "unlinked.json") { text in
            text = text.replacingOccurrences(of: #""news": {"path": "list_news(category={category})"},"#, with: "")
        }
        let refused = try cli.run(["check", unlinked, "--journeys", "feed.jsonl"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.output.contains("  refused unknown_transition · link news · on scene top: 2 session(s)"), "\(refused)")
        #expect(refused.output.hasSuffix("checked 4 sessions, 2 diverge, 1 not replayed\n"), "\(refused)")

        // list_coupon renamed: the batch that reached it ends on another path.
        let renamed = try Self.candidate(cli, "renamed.json") { text in
            text = text.replacingOccurrences(of: "list_coupon", with: "coupons_list")
        }
        let moved = try cli.run(["check", renamed, "--journeys", "feed.jsonl"])
        #expect(moved.status == 1, "\(moved)")
        #expect(moved.output.contains("  other path · batch [navigate ^/top, link coupons] · on scene help: 1 session(s)"), "\(moved)")
        #expect(moved.output.contains("      got      /top!/coupons_list ["), "\(moved)")
    }

    /// Analytics-form lines, broken lines, another graph's records and a session whose creation
    /// line is gone are counted apart with their reasons; CloudEvents are read as records.
    @Test func whatCannotBeReplayedIsCountedWithItsReason() throws {
        let daemon = try Self.recordedDaemon()
        let cli = try CLIProcess()
        defer { cli.remove() }
        var lines = try Self.dump(daemon, cli, to: "feed.jsonl")
        let analytics = try Self.dump(daemon, cli, full: false, to: "analytics.jsonl")
        let visitorCreation = try #require(lines.lastIndex { $0.contains(#""kind":"create""#) && $0.contains(#""name":"news""#) })
        lines.remove(at: visitorCreation)
        lines.insert("{\"id\": broken", at: 1)
        let events = try lines.map { line -> String in
            guard line.hasPrefix("{\"id\":\"") else { return line }
            let record = try JSONValue(parsing: line)
            let event: JSONValue = [
                "specversion": "1.0", "type": "dev.navd.navigation.changed", "id": record["id"] ?? .null, "data": record
            ]
            return event.jsonString
        }
        let mixed = events + analytics.map { $0.replacingOccurrences(of: #""session":""#, with: #""session":"a-"#) }
        try mixed.joined(separator: "\n").write(to: cli.directory.appendingPathComponent("mixed.jsonl"), atomically: true, encoding: .utf8)

        let run = try cli.run(["check", Self.news, "--journeys", "mixed.jsonl"])
        #expect(run.status == 0, "\(run)")
        #expect(run.errors.contains("navd: mixed.jsonl line 2: not JSON"), "\(run)")
        #expect(run.output.contains("  creation not in the input (swept): 1 session(s)"), "\(run)")
        // Another graph is the reason first, whatever the form.
        #expect(run.output.contains("  analytics-form records (no values to replay): 3 session(s)"), "\(run)")
        #expect(run.output.contains("  another graph 'stopwatch': 2 session(s)"), "\(run)")
        #expect(run.output.contains("  lines unreadable (no session named): 1 (line 2)"), "\(run)")
        #expect(run.output.hasSuffix("checked 8 sessions, 0 diverge, 6 not replayed\n"), "\(run)")
    }

    /// `--url` pages the daemon's full-form feed with the admin token; `--since` starts later.
    @Test func theDaemonsFeedIsReadWithSince() throws {
        let daemon = try Self.recordedDaemon()
        let cli = try CLIProcess(environment: ["NAVD_ADMIN_TOKEN": Self.admin])
        defer { cli.remove() }
        let url = "http://127.0.0.1:\(daemon.port)"
        let all = try cli.run(["check", Self.news, "--url", url, "--since", "1h"])
        #expect(all.status == 0, "\(all)")
        #expect(all.output.hasSuffix("checked 4 sessions, 0 diverge, 1 not replayed\n"), "\(all)")
        let later = try cli.run(["check", Self.news, "--url", url, "--since", "2999-01-01T00:00:00Z"])
        #expect(later.output == "checked 0 sessions, 0 diverge, 0 not replayed\n", "\(later)")
        let refused = try cli.run(["check", Self.news, "--url", url, "--token", "wrong"])
        #expect(refused.status == 1 && refused.errors.contains("the daemon refused the feed"), "\(refused)")
    }

    /// Usage errors and a candidate that does not validate: 2, with `navd validate`'s messages.
    @Test func usageErrorsAndABadCandidateExitTwo() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        try "{}".write(to: cli.directory.appendingPathComponent("feed.jsonl"), atomically: true, encoding: .utf8)
        for arguments in [
            ["check", Self.news], ["check", "--journeys", "feed.jsonl"],
            ["check", Self.news, "--journeys", "feed.jsonl", "--url", "http://127.0.0.1:1"],
            ["check", Self.news, "--journeys", "feed.jsonl", "--since", "1h"],
            ["check", Self.news, "--url", "http://127.0.0.1:1", "--since", "soon"],
            ["check", Self.news, "--journeys", "missing.jsonl"]
        ] {
            let run = try cli.run(arguments)
            #expect(run.status == 2, "\(arguments): \(run)")
            #expect(run.errors.hasPrefix("navd: "), "\(arguments): \(run)")
        }
        let unknown = try cli.run(["check", Self.news, "--journeys", "feed.jsonl", "--bogus"])
        #expect(unknown.status == 2 && unknown.errors.contains("Unknown option '--bogus'"), "\(unknown)")
        #expect(try cli.run(["feed", "--bogus"]).status == 64, "other commands keep ArgumentParser's status")
        let help = try cli.run(["check", "--help"])
        #expect(help.status == 0 && help.output.contains("USAGE: navd check"), "\(help)")
        let broken = try Self.candidate(cli, "broken.json") {
            $0 = $0.replacingOccurrences(of: #""start": "/top""#, with: #""start": "/nowhere""#)
        }
        let run = try cli.run(["check", broken, "--journeys", "feed.jsonl"])
        #expect(run.status == 2, "\(run)")
        let validate = try cli.run(["validate", broken])
        #expect(!validate.output.isEmpty && run.errors == validate.output, "\(run)\n\(validate)")
    }
}
