import Foundation
import NavJSON
import Testing

@testable import NavCLI
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `navd session …`, the CLI driver, run as a user runs it against a live daemon.
@Suite struct SessionCLITests {
    /// A new session made with `navd session new --url`, then driven without the URL or id: they
    /// come from `.navd/session`.
    @Test func aSessionDrivenByHand() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess()
        defer { cli.remove() }
        let url = "http://127.0.0.1:\(daemon.port)"

        let created = try cli.run(["session", "new", "--url", url, "--context", #"{"user": "u1"}"#])
        #expect(created.status == 0, "\(created)")
        #expect(created.output.contains("path /top\n  / top  e1  ← top\n"), "\(created)")
        #expect(created.output.contains("remembered in .navd/session"))
        let file = cli.directory.appendingPathComponent(".navd/session")
        let remembered = try JSONValue(parsing: Array(try Data(contentsOf: file)))
        #expect(remembered["url"]?.stringValue == url)
        #expect(remembered["id"]?.stringValue?.count == 32)
        #expect(remembered["token"]?.stringValue?.count == 64)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "the file holds the token")

        let deep = try cli.run(["session", "go", "list_news/show_news(id=44)"])
        #expect(deep.status == 0, "\(deep)")
        #expect(deep.output.contains("path /top/list_news(category=0)/show_news(id=44)\n"))
        #expect(deep.output.contains("  / top  e1\n  / list_news(category=0)  e2\n  / show_news(id=44)  e3  ← top\n"), "\(deep)")
        #expect(deep.output.contains("actions: links login, top · exit · back 2"))
        #expect(
            deep.output.contains(
                "events:\n     6  transitionStart /top → /top/list_news(category=0)/show_news(id=44)\n     7  awake           list_news  e2\n"
            ), "\(deep)")

        let shown = try cli.run(["session", "show", "--json"])
        #expect(shown.status == 0)
        let view = try JSONValue(parsing: shown.output)
        #expect(view["path"]?.stringValue == "/top/list_news(category=0)/show_news(id=44)")
        #expect(view["version"]?.intValue == 2)

        let link = try cli.run(["session", "link", "top"])
        #expect(link.status == 0 && link.output.contains("path /top\n"), "\(link)")
        let typed = try cli.run(["session", "link", "news", "category=2"])
        #expect(typed.status == 0 && typed.output.contains("path /top/list_news(category=2)\n"), "\(typed)")
        let back = try cli.run(["session", "back"])
        #expect(back.status == 0 && back.output.contains("path /top\n"), "\(back)")

        let same = try cli.run(["session", "go", "^/top"])
        #expect(same.status == 0)
        #expect(same.output.hasSuffix("\nno change\n"), "\(same)")

        let state = try cli.run(["session", "state", #"{"editing": true}"#])
        #expect(state.status == 0)
        #expect(state.output.contains(#"  / top  e1  state {"editing":true}  ← top"#), "\(state)")
        #expect(state.output.contains("stateChanged    top  e1"), "\(state)")

        let events = try cli.run(["session", "events", "--after", "5", "--limit", "2"])
        #expect(events.status == 0)
        #expect(
            events.output
                == "     6  transitionStart /top → /top/list_news(category=0)/show_news(id=44)\n     7  awake           list_news  e2\nnext 7\n",
            "\(events)")
    }

    /// Refusals: 1, and the problem's code on one line of standard error; nothing changes.
    @Test(arguments: [
        (["session", "exit"], "stack_underflow: the root screen cannot be exited"),
        (["session", "back", "3"], "stack_underflow:"),
        (["session", "go", "/top("], "invalid_path: "),
        (["session", "go", "nosuch"], "unknown_scene:"),
        (["session", "link", "nosuch"], "unknown_transition:"),
        (["session", "link", "news", "category=x"], "invalid_params:"),
        (["session", "state", "{}", "--screen", "e99"], "not_found:")
    ])
    func refusalsAreOneWithTheirCode(_ arguments: [String], _ expected: String) throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new"]).status == 0)
        let refused = try cli.run(arguments)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.output.isEmpty)
        #expect(refused.errorLines.count == 1, "\(refused)")
        #expect(refused.errors.hasPrefix("navd: " + expected), "\(refused)")
        let after = try cli.run(["session", "show", "--json"])
        #expect(try JSONValue(parsing: after.output)["version"]?.intValue == 1, "a refusal changes nothing")
    }

    /// With --json a refusal prints the problem document for scripts, and still exits 1.
    @Test func jsonRefusalPrintsTheProblem() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new", "--json"]).status == 0)
        let refused = try cli.run(["session", "exit", "--json"])
        #expect(refused.status == 1)
        #expect(try JSONValue(parsing: refused.output)["code"]?.stringValue == "stack_underflow")
    }

    /// `NAVD_URL`, `NAVD_SESSION` and `NAVD_TOKEN` stand for the file; an unknown session or a
    /// wrong token is the daemon's 401, exit 1 on one line.
    @Test func theEnvironmentNamesTheSession() throws {
        let daemon = try DaemonHarness()
        let maker = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { maker.remove() }
        let made = try JSONValue(parsing: try maker.run(["session", "new", "--json"]).output)
        let id = try #require(made["id"]?.stringValue)
        let token = try #require(made["token"]?.stringValue)

        let elsewhere = try CLIProcess(environment: [
            "NAVD_URL": "http://127.0.0.1:\(daemon.port)", "NAVD_SESSION": id, "NAVD_TOKEN": token
        ])
        defer { elsewhere.remove() }
        let moved = try elsewhere.run(["session", "link", "coupons"])
        #expect(moved.status == 0, "\(moved)")
        #expect(
            moved.output.contains("      ! list_coupon  e2  [navigation]  ← top")
                || moved.output.contains("    ! list_coupon  e2  [navigation]  ← top"), "\(moved)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere.directory.appendingPathComponent(".navd").path))

        let wrongToken = try elsewhere.run(["session", "show", "--token", String(repeating: "0", count: 64)])
        #expect(wrongToken.status == 1)
        #expect(wrongToken.errorLines.count == 1)
        #expect(wrongToken.errors.hasPrefix("navd: unauthorized: "), "\(wrongToken)")

        let unknown = try elsewhere.run(["session", "show", "--session", String(repeating: "a", count: 32)])
        #expect(unknown.status == 1)
        #expect(unknown.errors.hasPrefix("navd: unauthorized: ") && unknown.errors.contains("no such session"), "\(unknown)")
    }

    /// No daemon: 69 on one line, for every command. No session, a bad URL: 64.
    @Test func aDaemonThatIsDownOrNoSession() throws {
        let port = try DaemonHarness.freePort()
        let cli = try CLIProcess(environment: [
            "NAVD_URL": "http://127.0.0.1:\(port)", "NAVD_SESSION": String(repeating: "a", count: 32), "NAVD_TOKEN": "t"
        ])
        defer { cli.remove() }
        for arguments in [
            ["session", "new"], ["session", "show"], ["session", "go", "/top"], ["session", "link", "top"], ["session", "back"],
            ["session", "exit"], ["session", "state", "{}", "--screen", "e1"], ["session", "context", "{}"], ["session", "watch"],
            ["session", "events"], ["session", "end"]
        ] {
            let down = try cli.run(arguments)
            #expect(down.status == 69, "\(arguments): \(down)")
            #expect(
                down.errorLines.count == 1 && down.errors.hasPrefix("navd: cannot connect to http://127.0.0.1:\(port)"),
                "\(arguments): \(down)")
        }
        let bare = try CLIProcess()
        defer { bare.remove() }
        let none = try bare.run(["session", "show"])
        #expect(none.status == 64)
        #expect(none.errors == "navd: no session: run `navd session new`, or set NAVD_SESSION and NAVD_TOKEN\n")
        let https = try bare.run(["session", "new", "--url", "https://example.org"])
        #expect(https.status == 64 && https.errorLines.count == 1, "\(https)")
        let notJSON = try cli.run(["session", "state", "[1]"])
        #expect(notJSON.status == 64 && notJSON.errors.contains("must be a JSON object"), "\(notJSON)")
        let malformedFile = try CLIProcess()
        defer { malformedFile.remove() }
        try FileManager.default.createDirectory(
            at: malformedFile.directory.appendingPathComponent(".navd"), withIntermediateDirectories: true)
        try "not json".write(to: malformedFile.directory.appendingPathComponent(".navd/session"), atomically: true, encoding: .utf8)
        let unreadable = try malformedFile.run(["session", "show"])
        #expect(unreadable.status == 64 && unreadable.errors.contains("is not a session file"), "\(unreadable)")
    }

    /// A broken `.navd/session` is in the way only of what it would have said: with the URL, the
    /// session and the token all given, the command runs.
    @Test func aBrokenSessionFileIsIgnoredWhenEverythingIsGiven() throws {
        let daemon = try DaemonHarness()
        let maker = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { maker.remove() }
        let made = try JSONValue(parsing: try maker.run(["session", "new", "--json"]).output)
        let id = try #require(made["id"]?.stringValue)
        let token = try #require(made["token"]?.stringValue)
        let cli = try CLIProcess()
        defer { cli.remove() }
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent(".navd"), withIntermediateDirectories: true)
        try "not json".write(to: cli.directory.appendingPathComponent(".navd/session"), atomically: true, encoding: .utf8)
        let shown = try cli.run(["session", "show", "--url", "http://127.0.0.1:\(daemon.port)", "--session", id, "--token", token])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.output.contains("path /top\n"), "\(shown)")
        let partly = try cli.run(["session", "show", "--session", id, "--token", token])
        #expect(partly.status == 64 && partly.errors.contains("is not a session file"), "\(partly)")
    }

    /// A view navd answers is never too deep for navd's own CLI: a state 62 levels deep is within
    /// what a client may send, and the view nests it four levels further.
    @Test func aViewDeeperThanAClientsBoundIsShownAndWatched() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new"]).status == 0)
        let watcher = try cli.start(["session", "watch"])
        #expect(watcher.waitFor("← top"), "\(watcher.output)")
        let deep = String(repeating: #"{"a":"#, count: 61) + "1" + String(repeating: "}", count: 61)
        let state = try cli.run(["session", "state", #"{"deep":"# + deep + "}"])
        #expect(state.status == 0, "\(state)")
        let shown = try cli.run(["session", "show"])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.output.contains("path /top\n") && shown.output.contains(#"{"a":{"a":"#), "\(shown)")
        let json = try cli.run(["session", "show", "--json"])
        #expect(json.status == 0, "\(json)")
        #expect(watcher.waitFor("version 2"), "\(watcher.output)")
        #expect(!watcher.output.contains("version ?"), "\(watcher.output)")
        #expect(try cli.run(["session", "end"]).status == 0)
        #expect(watcher.exitStatus() == 0, "\(watcher.output)\(watcher.errors)")
    }

    /// A session file that cannot be written (`.navd` is a file): 73, on one line.
    @Test func anUnwritableSessionFileIsSeventyThree() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        try "in the way".write(to: cli.directory.appendingPathComponent(".navd"), atomically: true, encoding: .utf8)
        let run = try cli.run(["session", "new"])
        #expect(run.status == 73, "\(run)")
        #expect(run.errorLines.count == 1 && run.errors.hasPrefix("navd: cannot write .navd/session"), "\(run)")
    }

    /// Tabs, modals with their own stack, saved tab stacks: each where it belongs in the tree.
    @Test func theStageIsAnIndentedTree() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new", "--context", #"{"user": "u1"}"#]).status == 0)
        #expect(try cli.run(["session", "go", "home#friend/show_friend(name=bo)"]).status == 0)
        #expect(try cli.run(["session", "go", "^/top/home#profile"]).status == 0)
        let run = try cli.run(["session", "go", "!/list_coupon/show_coupon(id=3)"])
        #expect(run.status == 0, "\(run)")
        let stage = run.output.split(separator: "\n").prefix(10).joined(separator: "\n")
        #expect(
            stage.hasSuffix(
                """
                path /top/home#profile!/list_coupon/show_coupon(id=3)
                  / top  e1
                  / home  e2  tab bar on profile, saved: friend
                    # friend  e3  (saved tab)
                    / show_friend(name=bo)  e4  (saved)
                    # profile  e5  state {"editing":false}
                      ! list_coupon  e6  [navigation]
                      / show_coupon(id=3)  e7  ← top
                actions: links login, top · exit · back 4
                """), "\(run)")
    }

    /// `watch` follows the session: it prints a change another command makes, and exits 0 when
    /// the session ends.
    @Test(arguments: [false, true])
    func watchSeesAnotherCommandsChange(_ json: Bool) throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new"]).status == 0)
        let watcher = try cli.start(["session", "watch"] + (json ? ["--json"] : []))
        #expect(watcher.waitFor(json ? #""event":"view""# : "← top"), "\(watcher.output)")
        let moved = try cli.run(["session", "link", "news", "category=2"])
        #expect(moved.status == 0)
        if json {
            #expect(watcher.waitFor(#""version":2"#), "\(watcher.output)")
        } else {
            #expect(watcher.waitFor("transitionStart /top → /top/list_news(category=2)"), "\(watcher.output)")
            #expect(watcher.waitFor("path /top/list_news(category=2)\n"), "\(watcher.output)")
        }
        let ended = try cli.run(["session", "end"])
        #expect(ended.status == 0, "\(ended)")
        #expect(ended.output.contains("ended; .navd/session removed"))
        #expect(watcher.exitStatus() == 0, "\(watcher.output)\(watcher.errors)")
        if json {
            let lines = watcher.output.split(separator: "\n")
            let messages = try lines.map { try JSONValue(parsing: String($0)) }
            #expect(
                messages.map { $0["event"]?.stringValue ?? "" }.filter { $0 != "lifecycle" } == ["view", "view", "end"], "\(watcher.output)"
            )
            #expect(messages.last?["data"]?["reason"]?.stringValue == "deleted")
            #expect(messages.filter { $0["event"]?.stringValue == "lifecycle" }.allSatisfy { $0["id"]?.stringValue != nil })
        } else {
            #expect(watcher.output.hasSuffix("end: deleted\n"), "\(watcher.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent(".navd/session").path))
    }

    /// A stream that breaks (the daemon killed, then started again on its store) is resumed after
    /// the last event printed (Last-Event-ID): every event once, in order.
    @Test func watchResumesAfterTheDaemonComesBack() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let port = try DaemonHarness.freePort()
        let url = "http://127.0.0.1:\(port)"
        let serve = [
            "serve", "--listen", "127.0.0.1:\(port)", "--store", "sqlite:\(cli.directory.path)/navd.db",
            "--graph", DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json").path, "--drain", "0"
        ]
        var daemon = try cli.start(serve)
        defer { daemon.process.send(SIGKILL) }
        #expect(daemon.waitForEither("navd listening"), "\(daemon.output)\(daemon.errors)")
        #expect(try cli.run(["session", "new", "--url", url]).status == 0)
        let watcher = try cli.start(["session", "watch", "--json"])
        #expect(watcher.waitFor(#""event":"view""#), "\(watcher.output)")
        #expect(try cli.run(["session", "go", "help"]).status == 0)
        #expect(watcher.waitFor(#""to":"/top/help""#), "\(watcher.output)")

        daemon.process.send(SIGKILL)
        _ = daemon.process.waitUntilExit()
        daemon = try cli.start(serve)
        #expect(daemon.waitForEither("navd listening"), "\(daemon.output)\(daemon.errors)")
        // The watcher retries once a second; once it is back (a third view), a change reaches it.
        #expect(watcher.waitFor("navd: the event stream broke; resuming after event 12", inErrors: true), "\(watcher.errors)")
        var views = 0
        for _ in 0..<50 where views < 3 {
            usleep(100_000)
            views = watcher.output.components(separatedBy: #""event":"view""#).count - 1
        }
        #expect(views == 3, "\(watcher.output)")
        #expect(try cli.run(["session", "go", "^/top/list_news"]).status == 0)
        #expect(watcher.waitFor(#""to":"/top/list_news(category=0)","transition""#), "\(watcher.output)\(watcher.errors)")
        #expect(try cli.run(["session", "end"]).status == 0)
        #expect(watcher.exitStatus() == 0, "\(watcher.errors)")
        let seqs = watcher.output.split(separator: "\n").compactMap { line -> Int? in
            guard let message = try? JSONValue(parsing: String(line)), message["event"]?.stringValue == "lifecycle" else { return nil }
            return message["id"]?.stringValue.flatMap(Int.init)
        }
        // Creation was 1…5; `help` 6…12; the list, after the restart, 13…20.
        #expect(seqs == Array(6...20), "\(seqs)")
        daemon.process.send(SIGTERM)
        #expect(daemon.exitStatus() == 0)
    }

    /// `context` sends an RFC 7396 merge patch to `PATCH /v1/sessions/{id}/context` (docs/design.md, "Context changes"),
    /// checked on the wire against a stand-in daemon that records the request.
    @Test func contextSendsAMergePatch() throws {
        let server = try OneShotServer(
            answer:
                #"{"actions":{"back":0,"exit":false,"links":[]},"context":{"user":"u2"},"events":[{"keys":["user"],"scene":null,"screen":null,"seq":6,"transition":2,"type":"contextChanged"}],"graph":{"name":"news","version":1},"id":"aa","path":"/top","screens":[],"version":2}"#
        )
        let cli = try CLIProcess(environment: [
            "NAVD_URL": "http://127.0.0.1:\(server.port)", "NAVD_SESSION": String(repeating: "a", count: 32), "NAVD_TOKEN": "tok"
        ])
        defer { cli.remove() }
        let run = try cli.run(["session", "context", #"{"user": "u2", "locale": null}"#])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains(#"     6  contextChanged  keys ["user"]"#), "\(run)")
        let request = try #require(server.request())
        #expect(request.head.hasPrefix("PATCH /v1/sessions/\(String(repeating: "a", count: 32))/context HTTP/1.1\r\n"), "\(request.head)")
        #expect(request.head.contains("\r\nAuthorization: Bearer tok\r\n"))
        #expect(request.head.contains("\r\nContent-Type: application/merge-patch+json\r\n"))
        #expect(try JSONValue(parsing: request.body) == ["user": "u2", "locale": nil])
    }

    /// The same against the daemon, once it has the route (docs/design.md, "Redirect and resume"): a deep link behind a
    /// login redirects and waits as `pending`; the context change lets it in, in the same change.
    @Test(.enabled(if: SessionCLITests.daemonHasContextRoute))
    func contextAgainstTheDaemon() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new"]).status == 0)
        let redirected = try cli.run(["session", "go", "settings"])
        #expect(redirected.status == 0, "\(redirected)")
        #expect(redirected.output.contains("path /top!login\n") && redirected.output.contains("\npending /top/settings\n"), "\(redirected)")
        let run = try cli.run(["session", "context", #"{"user": "u1"}"#])
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("path /top/settings\n"), "\(run)")
        #expect(
            run.output.contains("events:\n    13  contextChanged  keys [\"user\"]\n    14  transitionStart /top!login → /top/settings\n"),
            "\(run)")
        #expect(!run.output.contains("pending"))
        let view = try JSONValue(parsing: try cli.run(["session", "show", "--json"]).output)
        #expect(view["context"] == ["user": "u1"])
        let notObject = try cli.run(["session", "context", "[]"])
        #expect(notObject.status == 64)
    }

    /// `exit --result` and `back --result` hand a value to the screen revealed (docs/design.md, "Results").
    @Test func resultsOnExitAndBack() throws {
        let daemon = try DaemonHarness()
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(daemon.port)"])
        defer { cli.remove() }
        #expect(try cli.run(["session", "new"]).status == 0)
        #expect(try cli.run(["session", "go", "list_news!pick_category"]).status == 0)
        let exited = try cli.run(["session", "exit", "--result", #"{"category": 3}"#])
        #expect(exited.status == 0, "\(exited)")
        #expect(exited.output.contains(#"result          list_news  e2  value {"category":3}  from pick_category"#), "\(exited)")
        #expect(try cli.run(["session", "go", "show_news(id=1)"]).status == 0)
        let back = try cli.run(["session", "back", "1", "--result", "true"])
        #expect(back.status == 0 && back.output.contains("result          list_news  e2  value true  from show_news"), "\(back)")
        let bad = try cli.run(["session", "back", "--result", "{"])
        #expect(bad.status == 64 && bad.errors == "navd: --result must be JSON, not '{'\n", "\(bad)")
    }

    static var daemonHasContextRoute: Bool {
        let spec = (try? String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("openapi.yaml"), encoding: .utf8)) ?? ""
        return spec.contains("/v1/sessions/{id}/context:")
    }
}

/// A stand-in daemon for one request: accepts a connection on a free port, records the request
/// and answers 200 with a fixed JSON body.
final class OneShotServer: @unchecked Sendable {
    struct Request {
        var head: String
        var body: [UInt8]
    }

    let port: Int
    private let listener: Int32
    private let recorded = CLIProcess.Locked<Request?>(nil)

    init(answer: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 4) == 0 else { throw DaemonHarness.StartFailure(description: "cannot listen") }
        port = Int(UInt16(bigEndian: address.sin_port))
        let socketDescriptor = listener
        let recorded = self.recorded
        Thread {
            let connection = accept(socketDescriptor, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                bytes += buffer[..<count]
                let text = String(decoding: bytes, as: UTF8.self)
                guard let end = text.range(of: "\r\n\r\n") else { continue }
                let head = String(text[..<end.lowerBound])
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                let headBytes = Array(text[..<end.upperBound].utf8).count
                guard bytes.count >= headBytes + length else { continue }
                recorded.set(Request(head: head + "\r\n", body: Array(bytes[headBytes..<(headBytes + length)])))
                let response =
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answer.utf8.count)\r\nConnection: close\r\n\r\n\(answer)"
                _ = Array(response.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                break
            }
        }.start()
    }

    deinit {
        close(listener)
    }

    /// The request, once it has come (waits up to 5 s).
    func request() -> Request? {
        let deadline = Date().addingTimeInterval(5)
        while recorded.value == nil, Date() < deadline { usleep(5_000) }
        return recorded.value
    }
}

/// How `navd session link` reads `KEY=VALUE`.
@Suite struct LinkParameterTests {
    @Test(arguments: [
        ("2", JSONValue.int(2)), ("-1.5", .double(-1.5)), ("true", .bool(true)), ("abc", .string("abc")),
        (#""12""#, .string("12")), ("007", .string("007")), ("", .string("")), ("null", .string("null")), ("[1]", .string("[1]"))
    ])
    func values(_ text: String, _ value: JSONValue) {
        #expect(Driver.scalar(text) == value)
    }
}
