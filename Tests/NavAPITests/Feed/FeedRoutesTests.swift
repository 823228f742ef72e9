import Foundation
import Testing

@testable import NavTestSupport

/// `GET /v1/feed` and `POST /v1/feed/purge` against the binary (docs/design.md, "Navigation
/// analytics"): who may read which form, every parameter's refusal, paging that reads each
/// record once, a long poll and a stream that follow new records, purges, and the counts.
@Suite(.serialized) struct FeedRoutesTests {
    static let admin = "feed-admin-token-0123456789"
    static let backend = "feed-backend-token-0123456789"

    /// A daemon on `store`: `memory`, or `sqlite` on a file of its own (removed when the test ends).
    static func start(_ store: String = "memory", arguments: [String] = []) throws -> DaemonHarness {
        var spec = "memory"
        if store == "sqlite" {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-feed-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            spec = "sqlite:\(directory.path)/navd.db"
        }
        return try DaemonHarness(
            store: spec, arguments: ["--admin-token", admin, "--backend-token", backend, "--feed-attribute", "user"] + arguments)
    }

    /// Creates a session with the backend token and `context`.
    static func session(_ navd: DaemonHarness, _ context: JSON = [:]) throws -> NavdSession {
        try navd.createSession(context: context, headers: ["Authorization": "Bearer \(backend)"])
    }

    static func feed(_ navd: DaemonHarness, _ query: String = "", token: String = admin) throws -> HTTPMessage {
        try navd.request("GET", "/v1/feed" + (query.isEmpty ? "" : "?" + query), headers: ["Authorization": "Bearer \(token)"])
    }

    /// Every record from the oldest, paging with `next` `limit` at a time.
    static func all(_ navd: DaemonHarness, limit: Int = 1000, form: String = "analytics") throws -> [JSON] {
        var records: [JSON] = []
        var query = "limit=\(limit)&form=\(form)"
        while true {
            let page = try feed(navd, query).json()
            let got = page["records"]?.array ?? []
            records += got
            guard let next = page["next"]?.string, !got.isEmpty else { return records }
            query = "limit=\(limit)&form=\(form)&after=\(next)"
        }
    }

    @Test func theAdminReadsBothFormsTheBackendOnlyAnalyticsOthersNeither() throws {
        let navd = try Self.start()
        let session = try Self.session(navd)
        let watch = try #require(session.created["watchToken"]?.string)
        #expect(try navd.request("GET", "/v1/feed").status == 401)
        #expect(try Self.feed(navd, token: session.token).code == "forbidden")
        #expect(try Self.feed(navd, token: watch).code == "forbidden")
        #expect(try Self.feed(navd, token: "not-a-token-of-this-daemon").code == "forbidden")
        #expect(try Self.feed(navd, "form=full", token: Self.backend).code == "forbidden")
        #expect(try Self.feed(navd, token: Self.backend).status == 200)
        let full = try Self.feed(navd, "form=full").json()
        #expect(full["records"]?[0]?["form"]?.string == "full")
        #expect(
            try navd.request(
                "POST", "/v1/feed/purge", headers: ["Authorization": "Bearer \(Self.backend)"], body: Array(#"{"session":"x"}"#.utf8)
            ).code == "forbidden")
        #expect(try navd.stop() == 0)
    }

    @Test func badParametersAre400WithParam() throws {
        let navd = try Self.start()
        for (query, param) in [
            ("after=abc", "after"), ("after=-1", "after"), ("after=01", "after"), ("limit=0", "limit"), ("limit=1001", "limit"),
            ("wait=61", "wait"), ("wait=-1", "wait"), ("since=yesterday", "since"), ("since=2026-13-01T00:00:00Z", "since"),
            ("form=raw", "form")
        ] {
            let answer = try Self.feed(navd, query)
            #expect(answer.status == 400, "\(query)")
            #expect(try answer.json()["param"]?.string == param, "\(query)")
        }
        let lastEventID = try navd.request(
            "GET", "/v1/feed", headers: ["Authorization": "Bearer \(Self.admin)", "Last-Event-ID": "x", "Accept": "text/event-stream"])
        #expect(lastEventID.status == 400)
        // Checked even where another parameter wins (Last-Event-ID over after and since).
        for query in ["since=", "after=x&since=2026-11-27T16:00:00Z"] {
            let answer = try navd.request(
                "GET", "/v1/feed?" + query, headers: ["Authorization": "Bearer \(Self.admin)", "Last-Event-ID": "0"])
            #expect(answer.status == 400, "\(query)")
        }
        // Sent twice: which cursor a proxy or a log read is not known, so neither is taken.
        let head = "GET /v1/feed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.admin)\r\n"
        let twice = try navd.raw(Array((head + "Last-Event-ID: 0\r\nLast-Event-ID: 0\r\n\r\n").utf8), target: "/v1/feed")
        #expect(twice.status == 400 && twice.code == "invalid_request")
        #expect(try twice.json()["detail"]?.string == "Last-Event-ID is given more than once")
        #expect(try twice.json()["param"]?.string == "Last-Event-ID")
        #expect(try navd.stop() == 0)
    }

    /// Each record once, in cursor order, per session in version order; an empty page answers
    /// the `after` it was given.
    @Test(arguments: ["memory", "sqlite"])
    func pagingWithNextReadsEveryRecordOnce(store: String) throws {
        let navd = try Self.start(store)
        var sessions: [NavdSession] = []
        for _ in 0..<4 {
            let session = try Self.session(navd)
            _ = try navd.navigate(session, "list_news")
            _ = try navd.navigate(session, "show_news(id=3)")
            sessions.append(session)
        }
        #expect(try navd.request("DELETE", sessions[0].url, headers: ["Authorization": "Bearer \(sessions[0].token)"]).status == 204)
        let records = try Self.all(navd, limit: 5)
        let ids = records.compactMap { $0["id"]?.string }
        #expect(ids.count == 13)
        #expect(Set(ids).count == 13)
        for session in sessions {
            let versions = records.filter { $0["session"]?.string == session.id }.compactMap { $0["version"]?.int }
            #expect(versions == (session.id == sessions[0].id ? [1, 2, 3, 4] : [1, 2, 3]))
        }
        #expect(ids.contains(sessions[0].id + ":end"))
        let last = try #require(records.last?["cursor"]?.string)
        let empty = try Self.feed(navd, "after=\(last)").json()
        #expect(empty["records"]?.array?.isEmpty == true)
        #expect(empty["next"]?.string == last)
        #expect(try navd.stop() == 0)
    }

    /// A cursor the feed never handed out (above the newest, or in another store's form) is a 400
    /// naming where it came from, on a page, a long poll, a stream and `navd feed --after`: an
    /// empty page would answer it forever and the reader would never learn. The newest cursor
    /// handed out is valid, after a purge of its record and a restart too.
    @Test(arguments: ["memory", "sqlite"])
    func aCursorTheFeedNeverGaveIsRefused(store: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-feed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = store == "sqlite" ? "sqlite:\(directory.path)/navd.db" : "memory"
        let arguments = ["--admin-token", Self.admin, "--backend-token", Self.backend]
        var navd = try DaemonHarness(store: spec, arguments: arguments)
        let empty = try #require(try Self.feed(navd).json()["next"]?.string)
        #expect(try Self.feed(navd, "after=\(empty)").status == 200)
        let session = try Self.session(navd)
        _ = try navd.navigate(session, "list_news")
        let newest = try #require(try Self.all(navd).last?["cursor"]?.string)
        let above = try #require(Int(newest)) + 1
        func refused(_ query: String, headers: [String: String] = [:]) throws {
            let answer = try navd.request(
                "GET", "/v1/feed?" + query, headers: headers.merging(["Authorization": "Bearer \(Self.admin)"]) { a, _ in a })
            #expect(answer.status == 400, "\(store) \(query) \(headers)")
            #expect(answer.code == "invalid_request", "\(store) \(query)")
            #expect(
                try answer.json()["param"]?.string == (headers["Last-Event-ID"] == nil ? "after" : "Last-Event-ID"), "\(store) \(query)")
        }
        for query in ["after=\(above)", "after=999999", "after=1.0", "after=7.3", "after=\(above)&wait=5"] { try refused(query) }
        try refused("", headers: ["Last-Event-ID": "999999", "Accept": "text/event-stream"])
        try refused("after=0", headers: ["Last-Event-ID": "\(above)"])
        for query in ["after=\(newest)", "after=0", "after=\(empty)"] {
            #expect(try Self.feed(navd, query).status == 200, "\(store) \(query)")
        }
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(navd.port)", "NAVD_ADMIN_TOKEN": Self.admin])
        defer { cli.remove() }
        let run = try cli.run(["feed", "--after", "999999"])
        #expect(run.status == 1, "\(run)")
        #expect(run.errors.contains("invalid_request"), "\(run)")
        // The newest record purged: its cursor was handed out, and stays valid.
        let purge = try navd.request(
            "POST", "/v1/feed/purge", headers: ["Authorization": "Bearer \(Self.admin)", "Content-Type": "application/json"],
            body: Array("{\"session\":\"\(session.id)\"}".utf8))
        #expect(purge.status == 200)
        #expect(try Self.feed(navd, "after=\(newest)").status == 200)
        try refused("after=\(above)")
        guard store == "sqlite" else { return #expect(try navd.stop() == 0) }
        // After a restart, and after a kill -9.
        for crash in [false, true] {
            if crash { navd.crash() } else { #expect(try navd.stop() == 0) }
            navd = try DaemonHarness(store: spec, arguments: arguments)
            let page = try Self.feed(navd, "after=\(newest)")
            #expect(page.status == 200)
            #expect(try page.json()["next"]?.string == newest)
            try refused("after=\(above)")
        }
        #expect(try navd.stop() == 0)
    }

    /// A long poll on an empty page answers with the next record as soon as it is written.
    @Test func aLongPollAnswersWithTheNextRecord() throws {
        let navd = try Self.start()
        let session = try Self.session(navd)
        let next = try #require(try Self.feed(navd).json()["next"]?.string)
        let poll = try WatcherTests.longPoll(
            navd, "/v1/feed?after=\(next)&wait=20", headers: ["Authorization": "Bearer \(Self.admin)"])
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        _ = try navd.navigate(session, "list_news")
        let answer = try poll.readResponse()
        #expect(Date().timeIntervalSince(started) < 5)
        let records = try answer.json()["records"]?.array ?? []
        #expect(records.map { $0["id"]?.string } == [session.id + ":2"])
        #expect(try navd.stop() == 0)
    }

    /// How far ahead a test's `since` lies: its first navigation must come before it. On a
    /// machine loaded enough that it did not, the test runs again with the second.
    static let timesToCome = [3.0, 20.0]

    /// Runs `body` with how far ahead its time to come lies, as many times as it takes (``timesToCome``) for its
    /// premise to hold: `body` answers false when its first navigation was answered at or after the
    /// time, so that what it asserts of records older than the time would be about none.
    static func withTimeToCome(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: (_ seconds: Double) throws -> Bool
    ) throws {
        for seconds in timesToCome where try body(seconds) { return }
        Issue.record("every navigation came after the time to come", sourceLocation: sourceLocation)
    }

    /// An RFC 3339 time `seconds` from now, in milliseconds.
    static func timeFromNow(_ seconds: Double) -> (text: String, date: Date) {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = Date().addingTimeInterval(seconds)
        return (formatter.string(from: date), date)
    }

    /// Sleeps until `date` has passed by a margin.
    static func sleep(pastDate date: Date) {
        Thread.sleep(forTimeInterval: max(0, date.timeIntervalSinceNow) + 0.2)
    }

    /// A reader that asks for a time still to come gets nothing older, however it waits: a long
    /// poll answers the first record at or after it, not one written before it; a page with
    /// `after` and `since` (a reader that has had no record yet) skips the older records and
    /// moves `next` past them.
    @Test(arguments: ["memory", "sqlite"])
    func aReaderAskingForATimeToComeGetsNothingOlder(store: String) throws {
        try Self.withTimeToCome { seconds in try readTimeToCome(store: store, seconds: seconds) }
    }

    /// ``aReaderAskingForATimeToComeGetsNothingOlder(store:)`` with `since` `seconds` ahead:
    /// false when its first navigation came too late.
    func readTimeToCome(store: String, seconds: Double) throws -> Bool {
        let navd = try Self.start(store)
        let session = try Self.session(navd)
        let since = Self.timeFromNow(seconds)
        let poll = try WatcherTests.longPoll(
            navd, "/v1/feed?since=\(since.text)&wait=20", headers: ["Authorization": "Bearer \(Self.admin)"])
        let empty = try Self.feed(navd, "since=\(since.text)").json()
        let next = try #require(empty["next"]?.string)
        #expect(empty["records"]?.array?.isEmpty == true)
        _ = try navd.navigate(session, "list_news")
        guard Date() < since.date else {
            _ = try navd.stop()
            return false
        }
        let skipped = try Self.feed(navd, "after=\(next)&since=\(since.text)").json()
        #expect(skipped["records"]?.array?.isEmpty == true)
        let movedOn = try #require(skipped["next"]?.string)
        #expect(movedOn != next)
        // `navd feed` says to go on with the time as well as the cursor, and takes both.
        let cli = try CLIProcess(environment: ["NAVD_URL": "http://127.0.0.1:\(navd.port)", "NAVD_ADMIN_TOKEN": Self.admin])
        defer { cli.remove() }
        let printed = try cli.run(["feed", "--since", since.text])
        #expect(printed.status == 0 && printed.output.isEmpty, "\(printed)")
        #expect(printed.errors.contains("next: \(movedOn) --since \(since.text)"), "\(printed)")
        let resumed = try cli.run(["feed", "--after", next, "--since", since.text])
        #expect(resumed.status == 0 && resumed.output.isEmpty, "the record older than --since: \(resumed)")
        Self.sleep(pastDate: since.date)
        _ = try navd.navigate(session, "show_news(id=2)")
        let answer = try poll.readResponse()
        #expect(try answer.json()["records"]?.array?.map { $0["id"]?.string } == [session.id + ":3"])
        let page = try Self.feed(navd, "after=\(movedOn)&since=\(since.text)").json()
        #expect(page["records"]?.array?.map { $0["id"]?.string } == [session.id + ":3"])
        #expect(try navd.stop() == 0)
        return true
    }

    /// A stream that starts at a time still to come sends no record written before it.
    @Test(arguments: ["memory", "sqlite"])
    func aStreamFromATimeToComeSendsNothingOlder(store: String) throws {
        try Self.withTimeToCome { seconds in
            let navd = try Self.start(store)
            let session = try Self.session(navd)
            let since = Self.timeFromNow(seconds)
            let stream = try EventStreamClient(
                port: navd.port, target: "/v1/feed?since=\(since.text)", headers: ["Authorization": "Bearer \(Self.admin)"])
            defer { stream.close() }
            #expect(stream.status == 200)
            #expect(try stream.next()?.data == "heartbeat 15")
            _ = try navd.navigate(session, "list_news")
            guard Date() < since.date else {
                _ = try navd.stop()
                return false
            }
            Self.sleep(pastDate: since.date)
            _ = try navd.navigate(session, "show_news(id=2)")
            let first = try #require(try stream.nextMessage())
            #expect(first.json?["id"]?.string == session.id + ":3")
            #expect(try navd.stop() == 0)
            return true
        }
    }

    /// A stream sends what is retained after `Last-Event-ID`, then every new record, each with
    /// its cursor as `id`.
    @Test(arguments: ["memory", "sqlite"])
    func aStreamResumesAfterLastEventIDAndFollows(store: String) throws {
        let navd = try Self.start(store)
        let session = try Self.session(navd)
        _ = try navd.navigate(session, "list_news")
        let first = try #require(try Self.feed(navd).json()["records"]?[0]?["cursor"]?.string)
        let stream = try EventStreamClient(
            port: navd.port, target: "/v1/feed", headers: ["Authorization": "Bearer \(Self.admin)", "Last-Event-ID": first])
        #expect(stream.status == 200)
        // The feed's stream announces its heartbeat too (the daemon's default, 15 s).
        #expect(try stream.next()?.data == "heartbeat 15")
        let resumed = try #require(try stream.nextMessage())
        #expect(resumed.event == "record")
        #expect(resumed.json?["id"]?.string == session.id + ":2")
        #expect(resumed.id == resumed.json?["cursor"]?.string)
        _ = try navd.navigate(session, "show_news(id=5)")
        let live = try #require(try stream.nextMessage())
        #expect(live.json?["id"]?.string == session.id + ":3")
        #expect(live.json?["to"]?["screen"]?["params"]?["id"]?.int == 5)
        stream.close()
        #expect(try navd.stop() == 0)
    }

    /// Records that together pass the stream's buffer (1 MiB) go in parts: the stream reads on,
    /// where a page written whole was refused, cut the stream, and its resume asked for it again.
    @Test func aStreamSendsMoreThanItsBufferHoldsInParts() throws {
        let navd = try Self.start()
        let session = try Self.session(navd)
        let large = String(repeating: "x", count: 40_000)
        for index in 0..<30 {
            #expect(try navd.patchState(session, screen: "e1", ["note": .string(large + String(index))]).status == 200)
        }
        let stream = try EventStreamClient(
            port: navd.port, target: "/v1/feed?form=full", headers: ["Authorization": "Bearer \(Self.admin)"])
        #expect(stream.status == 200)
        var ids: [String] = []
        while ids.count < 31, let message = try stream.nextMessage() {
            if message.event == "record", let id = message.json?["id"]?.string { ids.append(id) }
        }
        #expect(ids == (1...31).map { "\(session.id):\($0)" })
        stream.close()
        #expect(try navd.stop() == 0)
    }

    /// A record larger than the stream's whole buffer (1 MiB), as `--max-body` raised far allows
    /// (a batch of 20 state patches of 60 KB each, every value in the full form), still goes out
    /// whole, where it cut the stream, and its resume asked for it again.
    @Test func aStreamSendsARecordLargerThanItsBuffer() throws {
        let navd = try Self.start(arguments: ["--max-body", "4M"])
        let session = try Self.session(navd)
        let items = (0..<20).map { index in
            #"{"state":{"screen":"e1","patch":{"note":"\#(String(repeating: "z", count: 60_000))\#(index)"}}}"#
        }
        let batch = try navd.request(
            "POST", session.url + "/intents", headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "application/json"],
            body: Array(#"{"intents":[\#(items.joined(separator: ","))]}"#.utf8))
        #expect(batch.status == 200)
        let stream = try EventStreamClient(
            port: navd.port, target: "/v1/feed?form=full", headers: ["Authorization": "Bearer \(Self.admin)"])
        #expect(stream.status == 200)
        var ids: [String] = []
        while ids.count < 2, let message = try stream.nextMessage() {
            if message.event == "record", let id = message.json?["id"]?.string { ids.append(id) }
        }
        #expect(ids == ["\(session.id):1", "\(session.id):2"])
        stream.close()
        #expect(try navd.stop() == 0)
    }

    /// A secret in a context, a state patch and a command's arguments is in no analytics page;
    /// the attribute named by `--feed-attribute` is.
    @Test(arguments: ["memory", "sqlite"])
    func nothingButNamedAttributesLeavesInTheAnalyticsForm(store: String) throws {
        let navd = try Self.start(store)
        let secret = "secret-\(UUID().uuidString)"
        let session = try Self.session(navd, ["user": "u1", "card": .string(secret)])
        _ = try navd.navigate(session, "^/top/profile/edit_profile")
        let screen = try #require(try navd.view(session)["screens"]?.array?.last?["id"]?.string)
        let command = try navd.send(
            "POST", session.url + "/screens/\(screen)/commands", json: ["name": "type", "args": ["text": .string(secret)]],
            token: session.token)
        #expect(command.status == 200)
        _ = try navd.patchState(session, screen: screen, ["note": .string(secret)])
        let context = try navd.send(
            "PATCH", session.url + "/context", json: ["pin": .string(secret)], token: Self.backend,
            contentType: "application/merge-patch+json")
        #expect(context.status == 200)
        let analytics = try Self.all(navd)
        #expect(analytics.count == 5)
        #expect(!analytics.map(\.description).joined().contains(secret))
        #expect(analytics.allSatisfy { $0["attributes"]?["user"]?.string == "u1" })
        #expect(try Self.all(navd, form: "full").map(\.description).joined().contains(secret))
        #expect(try navd.stop() == 0)
    }

    @Test(arguments: ["memory", "sqlite"])
    func purgeForgetsBySessionAndByAttribute(store: String) throws {
        let navd = try Self.start(store)
        let first = try Self.session(navd, ["user": "u1"])
        _ = try navd.navigate(first, "list_news")
        let second = try Self.session(navd, ["user": "u2"])
        _ = try Self.session(navd)
        func purge(_ body: String) throws -> HTTPMessage {
            try navd.request(
                "POST", "/v1/feed/purge", headers: ["Authorization": "Bearer \(Self.admin)", "Content-Type": "application/json"],
                body: Array(body.utf8))
        }
        #expect(try purge(#"{"attribute":"user","value":"u1"}"#).json()["purged"]?.int == 2)
        #expect(try purge(#"{"session":"\#(second.id)"}"#).json()["purged"]?.int == 1)
        #expect(try Self.all(navd).count == 1)
        for bad in [#"{}"#, #"{"session":"x","attribute":"user","value":1}"#, #"{"attribute":"user"}"#, #"{"other":1}"#] {
            #expect(try purge(bad).status == 400, "\(bad)")
        }
        #expect(try navd.stop() == 0)
    }

    /// `/metrics` counts views by scene and changes by kind, and the feed's bytes as a budget.
    @Test func metricsCountViewsAndKinds() throws {
        let navd = try Self.start()
        let session = try Self.session(navd)
        _ = try navd.navigate(session, "list_news")
        let text = try navd.request("GET", "/metrics").text
        #expect(text.contains(#"navd_screen_views_total{graph="news",scene="top"} 1"#))
        #expect(text.contains(#"navd_screen_views_total{graph="news",scene="list_news"} 1"#))
        #expect(text.contains(#"navd_transitions_total{graph="news",kind="create"} 1"#))
        #expect(text.contains(#"navd_transitions_total{graph="news",kind="navigate"} 1"#))
        #expect(text.contains("navd_feed_records_total 2"))
        #expect(text.contains(#"navd_budget_limit{resource="feed_bytes"} 268435456"#))
        #expect(try navd.stop() == 0)
    }

    /// `--max-feed-bytes` holds after every write, not only at the periodic sweep: the write that
    /// passes it sweeps the oldest records before it answers.
    @Test(arguments: ["memory", "sqlite"]) func theFeedStaysWithinItsBytesAfterEveryWrite(store: String) throws {
        let navd = try Self.start(store, arguments: ["--max-feed-bytes", "64K"])
        let session = try Self.session(navd)
        var most = 0
        for index in 0..<200 {
            _ = try navd.navigate(session, index % 2 == 0 ? "list_news" : "^/top")
            let metrics = try navd.request("GET", "/metrics").text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix(#"navd_budget_used{resource="feed_bytes"} "#) }
            let used = try #require(line?.split(separator: " ").last.flatMap { Int($0) })
            #expect(used <= 64 << 10, "after navigation \(index + 1): \(used) bytes")
            most = max(most, used)
        }
        // Near the budget, not emptied: the oldest went, the newest stayed.
        #expect(most > 48 << 10)
        let records = try Self.feed(navd, "limit=1000").json()["records"]?.array ?? []
        #expect(records.first?["id"]?.string != "\(session.id):1")
        #expect(records.last?["id"]?.string == "\(session.id):201")
        #expect(try navd.stop() == 0)
    }

    /// A budget lowered across a restart holds at once, not from the first write after it.
    @Test func aBudgetLoweredAcrossARestartHoldsWithoutAWrite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-feed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = "sqlite:\(directory.path)/navd.db"
        func used(_ navd: DaemonHarness) throws -> Int {
            let line = try navd.request("GET", "/metrics").text.split(separator: "\n")
                .first { $0.hasPrefix(#"navd_budget_used{resource="feed_bytes"} "#) }
            return try #require(line?.split(separator: " ").last.flatMap { Int($0) })
        }
        let first = try DaemonHarness(store: spec, arguments: ["--admin-token", Self.admin])
        let session = try first.createSession()
        for index in 0..<200 { _ = try first.navigate(session, index % 2 == 0 ? "list_news" : "^/top") }
        #expect(try used(first) > 64 << 10)
        #expect(try first.stop() == 0)

        let second = try DaemonHarness(store: spec, arguments: ["--admin-token", Self.admin, "--max-feed-bytes", "64K"])
        let deadline = Date().addingTimeInterval(10)
        while try used(second) > 64 << 10, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try used(second) <= 64 << 10)
        let records = try Self.feed(second, "limit=1000").json()["records"]?.array ?? []
        #expect(records.last?["id"]?.string == "\(session.id):201")
        #expect(try second.stop() == 0)
    }

    @Test func withNoRetentionThereIsNoFeed() throws {
        let navd = try DaemonHarness(arguments: ["--admin-token", Self.admin, "--feed-retention", "0"])
        _ = try navd.createSession()
        #expect(try Self.feed(navd).code == "not_found")
        #expect(try !navd.request("GET", "/metrics").text.contains("feed_bytes"))
        #expect(try navd.stop() == 0)
    }
}
