import Foundation
import NavCore
import NavJSON
import NavTours
import Testing

@testable import NavTestSupport

/// `navd record`: a session driven by hand through HTTP, recorded, and replayed against other daemons.
@Suite struct RecordCLITests {
    static let admin = "record-admin-token-0123456789"

    /// A session of news.json that makes every kind of change once (docs/design.md, "Intents"):
    /// links, deep paths, a tab, a modal, an exit and a back with results, a params change, a state
    /// patch, a command, a context change resuming a redirect, a confirmed leave, a batch, an upgrade.
    /// Returns its id and token.
    static func drive(_ daemon: DaemonHarness, cli: CLIProcess) throws -> (id: String, token: String) {
        let session = try daemon.createSession(graph: "news", context: ["locale": "en"])
        var view = session.created
        func change(_ method: String, _ path: String, _ body: JSON?, status: Int = 200) throws {
            let answer = try daemon.send(method, session.url + path, json: body, token: session.token)
            #expect(answer.status == status, "\(method) \(path): \(answer.text)")
            if status == 200 { view = try answer.json() }
        }
        func top() -> String { view["screens"]?.array?.last?["id"]?.string ?? "" }
        try change("POST", "/transitions", ["name": "news", "params": ["category": 1]])
        try change("PUT", "/screens/\(top())/params", ["category": 2])
        try change("POST", "/navigate", ["path": "!pick_category"])
        try change("POST", "/exit", ["result": ["category": 3]])
        try change("POST", "/transitions", ["name": "show", "params": ["id": 7]])
        try change("POST", "/back", ["count": 1, "result": "read"])
        try change("POST", "/navigate", ["path": "^/top/home#friend"])
        try change("POST", "/navigate", ["path": "^/top/settings"])
        #expect(view["pending"]?.string == "/top/settings", "the redirect waits: \(view)")
        try change("PATCH", "/context", ["user": "u1"])
        #expect(view["path"]?.string == "/top/settings", "the context change resumes it: \(view)")
        try change("POST", "/navigate", ["path": "^/top/edit_profile"])
        let form = top()
        try change("PATCH", "/screens/\(form)/state", ["bio": "draft"])
        try change("POST", "/screens/\(form)/commands", ["name": "type", "args": ["text": "hi"]])
        let asked = try daemon.send("POST", session.url + "/navigate", json: ["path": "^/top"], token: session.token)
        #expect(asked.status == 409)
        let confirmation = try #require(try asked.json()["confirmation"]?["token"]?.string)
        try change("POST", "/confirm", ["token": .string(confirmation)])
        try change(
            "POST", "/intents",
            ["intents": [["link": "news", "params": ["category": 0]], ["link": "show", "params": ["id": 1]]]])
        let upgraded = try daemon.send(
            "PUT", "/v1/graphs/news", json: try graph { scenes in scenes["archive"] = .object([:]) },
            headers: ["Authorization": "Bearer \(admin)"])
        #expect(upgraded.status == 200, "\(upgraded)")
        try change("POST", "/upgrade", [:])
        #expect(view["graph"]?["version"]?.int == 2)
        try change("POST", "/back", ["count": 1])
        return (session.id, session.token)
    }

    /// news.json with its scenes changed by `edit`.
    static func graph(_ edit: (inout [String: NavJSON.JSONValue]) -> Void) throws -> JSON {
        let news = try NavJSON.JSONValue(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        guard case .object(var members) = news, case .object(var scenes)? = members["scenes"] else {
            throw JSON.ParseError(description: "news")
        }
        edit(&scenes)
        members["scenes"] = .object(scenes)
        return try JSON(parsing: NavJSON.JSONValue.object(members).jsonString)
    }

    /// A daemon serving `document` as its file (the harness takes graph paths relative to the package root).
    static func daemon(serving document: JSON, in cli: CLIProcess, arguments: [String] = []) throws -> DaemonHarness {
        let file = cli.directory.appendingPathComponent("graph-\(UUID().uuidString).json")
        try Data(document.bytes).write(to: file)
        let up = String(repeating: "../", count: DaemonHarness.packageRoot.standardizedFileURL.pathComponents.count - 1)
        return try DaemonHarness(graphs: [up + file.standardizedFileURL.path.dropFirst()], arguments: arguments)
    }

    @Test func aRecordedSessionReplaysAndCatchesALostLink() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let daemon = try DaemonHarness(graphs: ["Examples/news.json"], arguments: ["--admin-token", Self.admin])
        let (id, token) = try Self.drive(daemon, cli: cli)
        let recorded = try cli.run(["record", id, "--url", "http://127.0.0.1:\(daemon.port)", "--token", token])
        #expect(recorded.status == 0, "\(recorded)")
        #expect(recorded.errors == "recorded session \(id): versions 1 to 17 (16 step(s)) of graph 'news' version 1\n", "\(recorded)")
        let document = try TourDocument(json: try NavJSON.JSONValue(parsing: recorded.output))
        #expect(document.cover == nil && document.recording?.session == id && document.recording?.to == 17)
        #expect(document.context == ["locale": "en"] && document.tours.count == 1)
        let steps = try #require(document.tours.first?.steps)
        #expect(steps.count == 16)
        #expect(steps[4].intent == .link("show", params: ["id": 7]))
        #expect(steps[5].intent == .apply(.back(1, result: "read")))
        #expect(steps[12].intent == .confirm(.navigate("^/top")))
        #expect(steps[13].intent.description.hasPrefix(#"{"intents":["#))
        #expect(steps[14].intent == .upgrade(version: 2))
        let file = cli.directory.appendingPathComponent("recorded.json")
        try recorded.output.write(to: file, atomically: true, encoding: .utf8)

        // A fresh daemon on the same graph: every step agrees; it has no version 2 to upgrade to.
        let fresh = try DaemonHarness(graphs: ["Examples/news.json"])
        let replayed = try cli.run(["replay", file.path, "--url", "http://127.0.0.1:\(fresh.port)"])
        #expect(replayed.status == 0, "\(replayed)")
        #expect(
            replayed.errors
                == "navd: warning: tour 1, step 15 (upgrade to version 2): the daemon has no version 2 of graph 'news'; step skipped\n",
            "\(replayed)")
        #expect(replayed.output.hasSuffix("replayed 1 tour(s), 16 step(s) of graph 'news': no difference\n"), "\(replayed)")

        // A graph whose list has lost its `show` link: the step that took it fails, and says how.
        let lost = try Self.daemon(
            serving: try Self.graph { scenes in scenes["list_news"] = ["params": ["category": ["type": "int", "default": 0]]] }, in: cli)
        let failed = try cli.run(["replay", file.path, "--url", "http://127.0.0.1:\(lost.port)"])
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.errorLines.count == 2, "\(failed)")
        #expect(
            failed.errorLines.first?.hasPrefix("navd: warning: the daemon serves graph 'news' version 1 (fnv1a64:") == true, "\(failed)")
        #expect(
            failed.errorLines.last?.hasPrefix(
                "navd: tour 1, step 5 (link show(id=7)): expected path \(steps[4].path), got refused: unknown_transition: ") == true,
            "\(failed)")
    }

    /// `--to` stops the recording at a version; out of range and bad tokens are one line and a status.
    @Test func badInputAndRanges() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let daemon = try DaemonHarness(graphs: ["Examples/news.json"], arguments: ["--admin-token", Self.admin])
        let url = "http://127.0.0.1:\(daemon.port)"
        let session = try daemon.createSession(graph: "news")
        for name in ["login", "top"] {
            let answer = try daemon.send("POST", session.url + "/transitions", json: ["name": .string(name)], token: session.token)
            #expect(answer.status == 200, "\(answer)")
        }
        let partial = try cli.run(["record", session.id, "--url", url, "--token", session.token, "--to", "2"])
        #expect(partial.status == 0, "\(partial)")
        let document = try TourDocument(json: try NavJSON.JSONValue(parsing: partial.output))
        #expect(document.tours.first?.steps.map(\.intent) == [.link("login", params: [:])])
        // The admin token reads it too, from the environment.
        let byAdmin = try CLIProcess(environment: ["NAVD_ADMIN_TOKEN": Self.admin, "NAVD_URL": url])
        defer { byAdmin.remove() }
        #expect(try byAdmin.run(["record", session.id]).status == 0)

        let zero = try cli.run(["record", session.id, "--url", url, "--token", session.token, "--to", "0"])
        #expect(zero.status == 64 && zero.output.isEmpty, "\(zero)")
        let above = try cli.run(["record", session.id, "--url", url, "--token", session.token, "--to", "4"])
        #expect(above.status == 1 && above.output.isEmpty, "\(above)")
        #expect(above.errors == "navd: session \(session.id) is at version 3: --to 4 is above it\n", "\(above)")
        let wrong = try cli.run(["record", session.id, "--url", url, "--token", "not-the-token"])
        #expect(wrong.status == 1 && wrong.errorLines.count == 1 && wrong.errors.contains("unauthorized"), "\(wrong)")
        let unknown = try cli.run(["record", "0123456789abcdef0123456789abcdef", "--url", url, "--token", session.token])
        #expect(unknown.status == 1 && unknown.errorLines.count == 1 && unknown.output.isEmpty, "\(unknown)")
        let noToken = try cli.run(["record", session.id, "--url", url])
        #expect(noToken.status == 64 && noToken.errors.contains("no token"), "\(noToken)")

        // Records purged: nothing to record; then a change after them: the creation is gone.
        let purged = try daemon.send(
            "POST", "/v1/feed/purge", json: ["session": .string(session.id)], headers: ["Authorization": "Bearer \(Self.admin)"])
        #expect((200..<300).contains(purged.status), "\(purged)")
        let none = try cli.run(["record", session.id, "--url", url, "--token", session.token])
        #expect(
            none.status == 1 && none.errors == "navd: cannot record session \(session.id): none of its records is retained\n", "\(none)")
        #expect(try daemon.send("POST", session.url + "/transitions", json: ["name": "login"], token: session.token).status == 200)
        let swept = try cli.run(["record", session.id, "--url", url, "--token", session.token])
        #expect(swept.status == 1 && swept.errors.contains("its creation (version 1) is no longer retained"), "\(swept)")

        let feedOff = try DaemonHarness(graphs: ["Examples/news.json"], arguments: ["--feed-retention", "0"])
        let quiet = try feedOff.createSession(graph: "news")
        let off = try cli.run(["record", quiet.id, "--url", "http://127.0.0.1:\(feedOff.port)", "--token", quiet.token])
        #expect(off.status == 1 && off.errors.contains("its feed is off"), "\(off)")
    }

    /// The new forms, malformed in a tours document: 65 and the pointer of the value at fault.
    @Test(arguments: [
        (#"{"confirm": {"jump": 1}}"#, "/tours/0/steps/0/intent/confirm"),
        (#"{"upgrade": {"version": 0}}"#, "/tours/0/steps/0/intent/upgrade/version"),
        (#"{"intents": [{"navigate": "^/top"}, {"back": 0}]}"#, "/tours/0/steps/0/intent/intents/1/back")
    ])
    func malformedRecordedForms(_ intent: String, _ pointer: String) throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let file = cli.directory.appendingPathComponent("bad.json")
        try #"""
        {"format": "navd-tours/1", "cover": "recorded", "graph": {"name": "news", "fingerprint": "f"},
         "tours": [{"start": {"path": "/top", "events": []}, "steps": [{"intent": \#(intent), "path": "/top", "events": []}]}]}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let run = try cli.run(["replay", file.path, "--url", "http://127.0.0.1:1"])
        #expect(run.status == 65 && run.errorLines.count == 1, "\(run)")
        #expect(run.errors.hasPrefix("navd: \(file.path): not a tours document: \(pointer): "), "\(run)")
    }
}
