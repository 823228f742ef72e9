import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Live sessions over real sockets (docs/design.md, "Live sessions"): the event stream a watcher follows, the long
/// poll, the read-only watch token, CORS and HEAD — against the binary, since streams need one.
@Suite(.serialized, .sharedDaemon(arguments: ["--heartbeat", "1", "--cors-origin", "https://app.example"], transport: .process))
struct LiveSessionTests {
    func daemon() throws -> DaemonHarness {
        try #require(try DaemonHarness.shared() as? DaemonHarness)
    }

    func watch(_ session: NavdSession, query: String = "", headers: [String: String]? = nil) throws -> EventStreamClient {
        let watchToken = try #require(session.created["watchToken"]?.string)
        return try EventStreamClient(
            port: try daemon().port, target: session.url + "/events" + query,
            headers: headers ?? ["Authorization": "Bearer \(watchToken)"]
        )
    }

    // MARK: The stream

    @Test func theStreamOpensWithTheViewThenCarriesEveryChangeAsItIsApplied() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let stream = try watch(session)
        #expect(stream.status == 200)
        #expect(stream.header("content-type") == "text/event-stream")
        #expect(stream.header("cache-control") == "no-cache")
        let opening = try #require(try stream.nextMessage())
        #expect(opening.event == "view")
        #expect(opening.json?["version"]?.int == 1)
        #expect(opening.json?["actions"]?["back"]?.int == 0)

        for (step, answer) in [
            try navd.transition(session, "news", params: ["category": 2]),
            try navd.navigate(session, "show_news(id=7)"),
            try navd.back(session)
        ].enumerated() {
            let applied = try answer.json()
            let messages = try stream.untilView()
            // One lifecycle message per event, the same events in the same order, each with its seq as id.
            let lifecycle = messages.filter { $0.event == "lifecycle" }
            #expect(lifecycle.map { $0.json } == (applied["events"]?.array ?? []).map { Optional($0) }, "step \(step)")
            #expect(lifecycle.map(\.id) == (applied["events"]?.array ?? []).map { $0["seq"]?.int.map(String.init) }, "step \(step)")
            // Then the view after the change, the one the writer was answered.
            let view = try #require(messages.last)
            #expect(view.event == "view")
            #expect(view.json?["version"] == applied["version"])
            #expect(view.json?["path"] == applied["path"])
            #expect(view.json?["actions"] == applied["actions"])
        }
    }

    @Test func aWatcherResumesAfterLastEventIDOrAfterAndMissesNothing() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        _ = try navd.transition(session, "news", params: ["category": 1])
        let all = try navd.request("GET", session.url + "/events?limit=1000", headers: ["Authorization": "Bearer \(session.token)"]).json()
        let seqs = (all["events"]?.array ?? []).compactMap { $0["seq"]?.int }
        #expect(seqs == Array(1...12))

        // Last-Event-ID wins over ?after= (EventSource reconnects to the same URL with it). The
        // view comes first, then the replay; the view is current already, so none follows it.
        var last = 12
        for (query, headers, from) in [
            ("?after=3", [String: String](), 4), ("?after=1", ["Last-Event-ID": "7"], 8), ("", ["Last-Event-ID": "0"], 1)
        ] {
            var fields = headers
            fields["Authorization"] = "Bearer \(session.token)"
            let stream = try watch(session, query: query, headers: fields)
            let view = try #require(try stream.nextMessage())
            #expect(view.event == "view")
            #expect(view.json?["version"] == (try navd.view(session))["version"])
            #expect(try stream.lifecycleSeqs(through: last) == Array(from...last), "\(query) \(headers)")
            // Then live changes continue from there, none skipped, each change closed by its view.
            _ = try navd.navigate(session, "show_news(id=1)")
            _ = try navd.back(session)
            let live = try stream.untilView() + stream.untilView()
            let liveSeqs = live.filter { $0.event == "lifecycle" }.compactMap { $0.id.flatMap(Int.init) }
            #expect(liveSeqs == Array((last + 1)...(last + live.count - 2)))
            #expect(live.filter { $0.event == "view" }.count == 2)
            last += liveSeqs.count
        }
        // Without either, the stream starts at the current view: nothing replayed.
        let fresh = try watch(session)
        #expect(try fresh.nextMessage()?.event == "view")
        _ = try navd.navigate(session, "show_news(id=2)")
        let first = try #require(try fresh.nextMessage())
        #expect(first.event == "lifecycle")
        #expect(first.json?["type"]?.string == "transitionStart")
    }

    @Test func everyWatcherGetsEveryEventOnceInOrderWhileManyWritersRace() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let watchers = [try watch(session), try watch(session)]
        for watcher in watchers { #expect(try watcher.nextMessage()?.event == "view") }
        // Four writers, each going back and forth: every change applied, in some order.
        let writers = (0..<4).map { writer in
            OnThread {
                for round in 0..<15 {
                    _ = try navd.navigate(session, round % 2 == 0 ? "^/top/list_news(category=\(writer))" : "^/top")
                }
            }
        }
        for writer in writers { try writer.value() }
        let final = try navd.view(session)
        let last = try #require(
            try navd.request("GET", session.url + "/events?after=0&limit=1000", headers: ["Authorization": "Bearer \(session.token)"])
                .json()["next"]?.int)
        for watcher in watchers {
            var seqs: [Int] = []
            var lastView: JSON?
            while seqs.last != last || lastView?["version"] != final["version"] {
                let message = try #require(try watcher.nextMessage(), "the stream ended at seq \(seqs.last ?? 0) of \(last)")
                if message.event == "lifecycle", let seq = message.id.flatMap(Int.init) { seqs.append(seq) }
                if message.event == "view" { lastView = message.json }
            }
            #expect(seqs == Array(6...last))
            #expect(lastView?["path"] == final["path"])
        }
    }

    @Test func deletingTheSessionEndsItsStreams() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let stream = try watch(session)
        #expect(try stream.nextMessage()?.event == "view")
        #expect(try navd.request("DELETE", session.url, headers: ["Authorization": "Bearer \(session.token)"]).status == 204)
        let end = try #require(try stream.nextMessage())
        #expect(end.event == "end")
        #expect(end.json == ["reason": "deleted"])
        #expect(try stream.next() == nil)
        #expect(stream.ended)
    }

    /// The first line of a stream announces the heartbeat interval (`--heartbeat 1` here), before
    /// the retry hint and the view: a client that hears nothing for two intervals knows the stream
    /// is dead.
    @Test func aStreamAnnouncesItsHeartbeatIntervalFirst() throws {
        let session = try daemon().createSession()
        let stream = try watch(session)
        let opening = [try stream.next(), try stream.next(), try stream.next()]
        #expect(opening.map { $0?.event } == ["comment", "retry", "view"])
        #expect(opening.first??.data == "heartbeat 1")
        #expect(opening[1]?.data == "2000")
        stream.close()
    }

    @Test func heartbeatsKeepComingAndAWatcherThatLeavesIsLetGo() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        // Streams of earlier tests, closed by their clients, are let go at their next heartbeat.
        var before = try Self.watchers(navd)
        for _ in 0..<50 where before != 0 {
            Thread.sleep(forTimeInterval: 0.1)
            before = try Self.watchers(navd)
        }
        let stream = try watch(session)
        #expect(try stream.nextMessage()?.event == "view")
        // --heartbeat 1: a comment within about a second.
        var comments = 0
        let started = Date()
        while comments < 2, Date().timeIntervalSince(started) < 5 {
            if try stream.next()?.event == "comment" { comments += 1 }
        }
        #expect(comments == 2)
        #expect(try Self.watchers(navd) == before + 1)
        stream.close()
        // The next heartbeat finds the socket closed; the watcher is let go.
        var now = before + 1
        for _ in 0..<50 where now != before {
            Thread.sleep(forTimeInterval: 0.1)
            now = try Self.watchers(navd)
        }
        #expect(now == before)
    }

    static func watchers(_ navd: DaemonHarness) throws -> Int {
        let metrics = try navd.request("GET", "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("navd_watchers ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    // MARK: Tokens and bad input

    @Test func theWatchTokenReadsButNeverChangesAndOnlyItMayTravelInTheURL() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let watchToken = try #require(session.created["watchToken"]?.string)
        #expect(watchToken != session.token)
        // Read: the view, the events, the stream (in the URL too).
        #expect(try navd.request("GET", session.url, headers: ["Authorization": "Bearer \(watchToken)"]).status == 200)
        #expect(try navd.request("GET", session.url + "/events", headers: ["Authorization": "Bearer \(watchToken)"]).status == 200)
        #expect(try navd.request("GET", session.url + "/events?access_token=\(watchToken)").status == 200)
        let stream = try watch(session, query: "?access_token=\(watchToken)", headers: [:])
        #expect(stream.status == 200)
        #expect(try stream.nextMessage()?.event == "view")
        // Never a change.
        let refused = try navd.send("POST", session.url + "/navigate", json: ["path": "help"], token: watchToken)
        #expect(refused.status == 401)
        #expect(try navd.request("DELETE", session.url, headers: ["Authorization": "Bearer \(watchToken)"]).status == 401)
        // The write token in a URL is refused like a wrong one (URLs end up in logs).
        for target in [session.url + "/events?access_token=\(session.token)", session.url + "/events?access_token=nonsense"] {
            let answer = try navd.request("GET", target)
            #expect(answer.status == 401)
            #expect(answer.code == "unauthorized")
            let streamed = try watch(session, query: String(target.drop { $0 != "?" }), headers: [:])
            #expect(streamed.status == 401)
        }
        // A token given twice is refused whichever comes last: a proxy may have checked the other.
        for query in ["?access_token=\(watchToken)&access_token=\(session.token)", "?access_token=nonsense&access_token=\(watchToken)"] {
            let answer = try navd.request("GET", session.url + "/events" + query)
            #expect(answer.status == 400)
            #expect(answer.code == "invalid_request")
            #expect((try? answer.json())?["param"]?.string == "access_token")
        }
        let other = try navd.createSession()
        #expect(
            try navd.request("GET", session.url, headers: ["Authorization": "Bearer \(other.created["watchToken"]?.string ?? "")"]).status
                == 401)
    }

    @Test func badInputGetsTheJSONRoutesProblemsNotABrokenStream() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let auth = ["Authorization": "Bearer \(session.token)"]
        for (query, headers, status, param) in [
            ("", ["Last-Event-ID": "x1"], 400, "Last-Event-ID"), ("", ["Last-Event-ID": "-1"], 400, "Last-Event-ID"),
            ("?wait=61", [:], 400, "wait"), ("?after=-1", [:], 400, "after")
        ] as [(String, [String: String], Int, String)] {
            let stream = try watch(session, query: query, headers: auth.merging(headers) { $1 })
            #expect(stream.status == status, "\(query) \(headers)")
            let answer = try navd.request("GET", session.url + "/events" + query, headers: auth.merging(headers) { $1 })
            #expect(answer.status == status)
            #expect((try? answer.json())?["param"]?.string == param)
        }
        // Sent twice, even the same seq: which one a proxy or a log read is not known.
        for accept in ["application/json", "text/event-stream"] {
            let twice = try navd.raw(
                Array(
                    ("GET \(session.url)/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(session.token)\r\nAccept: \(accept)\r\n"
                        + "Last-Event-ID: 1\r\nLast-Event-ID: 1\r\n\r\n").utf8), target: session.url + "/events")
            #expect(twice.status == 400 && twice.code == "invalid_request", "\(accept)")
            #expect((try? twice.json())?["detail"]?.string == "Last-Event-ID is given more than once")
        }
        // An unknown session, a wrong token, no token: the same 401s as every session route.
        let unknown = try EventStreamClient(
            port: navd.port, target: "/v1/sessions/\(String(repeating: "0", count: 32))/events", headers: auth)
        #expect(unknown.status == 401)
        #expect(unknown.header("content-type") == "application/problem+json")
        let anonymous = try EventStreamClient(port: navd.port, target: session.url + "/events")
        #expect(anonymous.status == 401)
        #expect(anonymous.header("www-authenticate") == "Bearer")
    }

    // MARK: Long poll

    @Test func aLongPollAnswersWhenAnEventArrivesOrWhenTheWaitEnds() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let auth = ["Authorization": "Bearer \(session.token)"]
        // Something after 5 already: at once.
        let ready = try navd.request("GET", session.url + "/events?after=0&wait=30", headers: auth)
        #expect(try ready.json()["next"]?.int == 5)
        // Nothing yet: answered by the change, well before the wait ends.
        let started = Date()
        let waited = OnThread { try navd.request("GET", session.url + "/events?after=5&wait=30", headers: auth) }
        usleep(300_000)
        _ = try navd.navigate(session, "help")
        let answer = try waited.value()
        #expect(answer.status == 200)
        #expect(answer.headers["etag"] == "\"2\"")
        #expect(try answer.json()["events"]?[0]?["seq"]?.int == 6)
        #expect(Date().timeIntervalSince(started) < 10)
        // Nothing at all: the empty page after the wait.
        let quiet = Date()
        let empty = try navd.request("GET", session.url + "/events?after=100&wait=1", headers: auth)
        #expect(try empty.json()["events"]?.array == [])
        #expect(Date().timeIntervalSince(quiet) >= 0.9)
        // Deleted meanwhile: answered as the page would be, and counted with that answer.
        let refusedBefore = try Self.eventsAnswered(navd, status: 401)
        let orphan = OnThread { try navd.request("GET", session.url + "/events?after=100&wait=30", headers: auth) }
        usleep(300_000)
        _ = try navd.request("DELETE", session.url, headers: auth)
        #expect(try orphan.value().status == 401)
        #expect(try Self.eventsAnswered(navd, status: 401) == refusedBefore + 1)
    }

    /// `navd_http_requests_total` of the events route's GETs with `status`.
    static func eventsAnswered(_ navd: DaemonHarness, status: Int) throws -> Int {
        let prefix = "navd_http_requests_total{method=\"GET\",route=\"/v1/sessions/{id}/events\",status=\"\(status)\"} "
        let line = try navd.request("GET", "/metrics").text.split(separator: "\n").first { $0.hasPrefix(prefix) }
        return Int(line?.dropFirst(prefix.count) ?? "0") ?? 0
    }

    // MARK: Browsers

    @Test func allowedOriginsGetCORSHeadersAndPreflightsAnAnswer() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let preflight = try navd.request(
            "OPTIONS", session.url + "/navigate",
            headers: [
                "Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type"
            ]
        )
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-origin"] == "https://app.example")
        #expect(preflight.headers["access-control-allow-methods"]?.contains("POST") == true)
        #expect(preflight.headers["access-control-allow-headers"]?.lowercased().contains("authorization") == true)
        let read = try navd.request(
            "GET", session.url, headers: ["Origin": "https://app.example", "Authorization": "Bearer \(session.token)"])
        #expect(read.headers["access-control-allow-origin"] == "https://app.example")
        #expect(read.headers["access-control-expose-headers"]?.contains("ETag") == true)
        #expect(read.headers["access-control-expose-headers"]?.contains("X-Request-Id") == true)
        // Another origin: no CORS headers, and its preflight is an ordinary 405.
        let foreign = try navd.request(
            "GET", session.url, headers: ["Origin": "https://evil.example", "Authorization": "Bearer \(session.token)"])
        #expect(foreign.headers["access-control-allow-origin"] == nil)
        let foreignPreflight = try navd.request(
            "OPTIONS", session.url + "/navigate", headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"])
        #expect(foreignPreflight.status == 405)
    }

    /// With CORS on, every answer's headers depend on `Origin` (its CORS headers are there for an
    /// allowed origin only), so every answer says `Vary: Origin`: a cache in front of navd must
    /// not hand one origin's answer, or an answer to no origin, to another.
    @Test func everyAnswerVariesOnOriginWhenCORSIsOn() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let auth = "Bearer \(session.token)"
        let answers: [(String, HTTPMessage)] = [
            ("allowed origin", try navd.request("GET", session.url, headers: ["Origin": "https://app.example", "Authorization": auth])),
            ("other origin", try navd.request("GET", session.url, headers: ["Origin": "https://evil.example", "Authorization": auth])),
            ("no origin", try navd.request("GET", session.url, headers: ["Authorization": auth])),
            ("no origin, an error", try navd.request("GET", session.url)),
            ("other origin, no route", try navd.request("GET", "/nowhere", headers: ["Origin": "https://evil.example"])),
            (
                "allowed preflight",
                try navd.request(
                    "OPTIONS", session.url + "/navigate",
                    headers: ["Origin": "https://app.example", "Access-Control-Request-Method": "POST"])
            ),
            (
                "other preflight",
                try navd.request(
                    "OPTIONS", session.url + "/navigate",
                    headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"])
            ),
            ("a change", try navd.navigate(session, "login"))
        ]
        for (what, answer) in answers {
            let vary = (answer.headers["vary"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            #expect(vary.contains("origin"), "\(what): \(answer.headers)")
        }
    }

    @Test func everyGETRouteAnswersHEADWithItsHeadersAndNoBody() throws {
        let navd = try daemon()
        let session = try navd.createSession()
        let auth = ["Authorization": "Bearer \(session.token)"]
        for target in [
            "/healthz", "/readyz", "/metrics", "/openapi.yaml", "/v1/graphs", "/v1/graphs/news", session.url, session.url + "/events"
        ] {
            let get = try navd.request("GET", target, headers: auth)
            let head = try navd.request("HEAD", target, headers: auth)
            #expect(head.status == get.status, "\(target)")
            #expect(head.body.isEmpty, "\(target)")
            #expect(head.headers["content-type"] == get.headers["content-type"], "\(target)")
            #expect(head.headers["etag"] == get.headers["etag"], "\(target)")
        }
    }
}

/// Streams end when their session expires and when the daemon stops.
@Suite(.serialized) struct LiveSessionEndTests {
    @Test func anExpiredSessionEndsItsStreams() throws {
        let navd = try DaemonHarness(arguments: ["--session-ttl", "2s"])
        let session = try navd.createSession()
        let stream = try EventStreamClient(
            port: navd.port, target: session.url + "/events", headers: ["Authorization": "Bearer \(session.token)"])
        #expect(try stream.nextMessage()?.event == "view")
        let end = try #require(try stream.nextMessage())
        #expect(end.event == "end")
        #expect(end.json == ["reason": "expired"])
        #expect(try navd.stop() == 0)
    }

    @Test func stoppingTheDaemonEndsStreamsWithShutdown() throws {
        let navd = try DaemonHarness()
        let session = try navd.createSession()
        let stream = try EventStreamClient(
            port: navd.port, target: session.url + "/events", headers: ["Authorization": "Bearer \(session.token)"])
        #expect(try stream.nextMessage()?.event == "view")
        #expect(try navd.stop() == 0)
        let end = try #require(try stream.nextMessage())
        #expect(end.event == "end")
        #expect(end.json == ["reason": "shutdown"])
    }
}
