import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Watchers (event streams, long polls) against the binary: a client that hangs up is let go at
/// once, watchers are bounded per session and for the daemon, a long poll the daemon stops
/// under is told so, and a long poll past the newest event waits for the next one
/// (docs/design.md, "Watchers").
@Suite(.serialized) struct WatcherTests {
    /// A gauge or counter of `/metrics`, by the start of its line (`navd_watchers `).
    static func metric(_ navd: DaemonHarness, _ prefix: String) throws -> Int {
        let text = try navd.request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(prefix) }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    static func watchers(_ navd: DaemonHarness) throws -> Int { try metric(navd, "navd_watchers ") }

    /// Polls `/metrics` until `condition` holds of `navd_watchers`, up to `seconds`.
    /// - Returns: whether it did.
    static func waitForWatchers(_ navd: DaemonHarness, within seconds: Double, _ condition: (Int) -> Bool) throws -> Bool {
        let started = Date()
        repeat {
            if condition(try watchers(navd)) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date().timeIntervalSince(started) < seconds
        return false
    }

    /// A long poll sent on a connection of its own and left waiting (its answer never read).
    static func longPoll(_ navd: DaemonHarness, _ target: String, headers: [String: String] = [:]) throws -> HTTPConnection {
        let connection = try HTTPConnection(port: navd.port)
        var head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try connection.send(Array((head + "\r\n").utf8))
        return connection
    }

    @Test func longPollsAndStreamsWhoseClientsHangUpAreLetGoWithinASecondOrTwo() throws {
        // Heartbeats far apart: only the hang-up can let these watchers go in time.
        let navd = try DaemonHarness(arguments: ["--heartbeat", "600"])
        let session = try navd.createSession()
        let watchToken = try #require(session.created["watchToken"]?.string)
        // The connections of the requests before may still be closing: the least of a few
        // readings, so that one closing now is not taken for a descriptor a watcher holds.
        var descriptorsBefore = Int.max
        for _ in 0..<5 {
            descriptorsBefore = min(descriptorsBefore, try Self.metric(navd, "process_open_fds "))
            Thread.sleep(forTimeInterval: 0.05)
        }
        var polls: [HTTPConnection] = []
        var streams: [EventStreamClient] = []
        for _ in 0..<8 {
            polls.append(try Self.longPoll(navd, session.url + "/events?access_token=\(watchToken)&after=1000&wait=60"))
            let stream = try EventStreamClient(port: navd.port, target: session.url + "/events?access_token=\(watchToken)")
            // The interval announced is the daemon's own, whatever it is.
            #expect(try stream.next() == EventStreamClient.Message(event: "comment", id: nil, data: "heartbeat 600"))
            #expect(try stream.nextMessage()?.event == "view")
            streams.append(stream)
        }
        #expect(try Self.waitForWatchers(navd, within: 5) { $0 == 16 })
        #expect(try Self.metric(navd, "process_open_fds ") >= descriptorsBefore + 16)
        for poll in polls { poll.close() }
        for stream in streams { stream.close() }
        streams = []
        // Let go within a second or two, not at the next heartbeat or when the wait ends.
        let letGo = try Self.waitForWatchers(navd, within: 2) { $0 == 0 }
        let left = try Self.watchers(navd)
        #expect(letGo, "navd_watchers: \(left)")
        #expect(try Self.metric(navd, "navd_budget_used{resource=\"watchers\"} ") == 0)
        // MHD closes each connection once it is resumed, just after its watcher was let go.
        var descriptors = try Self.metric(navd, "process_open_fds ")
        for _ in 0..<40 where descriptors > descriptorsBefore + 2 {
            Thread.sleep(forTimeInterval: 0.05)
            descriptors = try Self.metric(navd, "process_open_fds ")
        }
        #expect(descriptors <= descriptorsBefore + 2)
        // Each freed slot is a slot again: the session takes as many watchers as before.
        #expect(try navd.request("GET", session.url + "/events?access_token=\(watchToken)").status == 200)
        #expect(try navd.stop() == 0)
    }

    @Test func aSessionTakesAtMostItsWatchersThenAnswers429WithRetryAfter() throws {
        let navd = try DaemonHarness(arguments: ["--max-watchers-per-session", "3"])
        let session = try navd.createSession()
        let other = try navd.createSession()
        let auth = ["Authorization": "Bearer \(session.token)"]
        var held: [EventStreamClient] = []
        for _ in 0..<2 { held.append(try EventStreamClient(port: navd.port, target: session.url + "/events", headers: auth)) }
        let poll = try Self.longPoll(navd, session.url + "/events?after=5&wait=60", headers: auth)
        #expect(try Self.waitForWatchers(navd, within: 5) { $0 == 3 })
        // A fourth, stream or long poll: refused, with a problem and a time to retry.
        let refusedStream = try EventStreamClient(port: navd.port, target: session.url + "/events", headers: auth)
        #expect(refusedStream.status == 429)
        #expect(refusedStream.header("retry-after") != nil)
        let refusedPoll = try navd.request("GET", session.url + "/events?after=5&wait=60", headers: auth)
        #expect(refusedPoll.status == 429)
        #expect(refusedPoll.code == "too_many_requests")
        #expect(refusedPoll.headers["retry-after"] != nil)
        #expect(refusedPoll.headers["content-type"] == "application/problem+json")
        // A page is no watcher: still answered. Another session is not touched.
        #expect(try navd.request("GET", session.url + "/events", headers: auth).status == 200)
        let elsewhere = try EventStreamClient(
            port: navd.port, target: other.url + "/events", headers: ["Authorization": "Bearer \(other.token)"])
        #expect(elsewhere.status == 200)
        // One leaves: its slot is free again.
        poll.close()
        #expect(try Self.waitForWatchers(navd, within: 3) { $0 == 3 })
        let again = try EventStreamClient(port: navd.port, target: session.url + "/events", headers: auth)
        #expect(again.status == 200)
        #expect(try navd.stop() == 0)
    }

    @Test func theDaemonsWatchersTakeAtMostHalfItsConnectionsThen503OverCapacity() throws {
        // 16 connections: at most 8 watchers, whatever their sessions.
        let navd = try DaemonHarness(arguments: ["--max-connections", "16"])
        #expect(try Self.metric(navd, "navd_budget_limit{resource=\"watchers\"} ") == 8)
        var held: [EventStreamClient] = []
        for _ in 0..<4 {
            let session = try navd.createSession()
            for _ in 0..<2 {
                held.append(
                    try EventStreamClient(
                        port: navd.port, target: session.url + "/events", headers: ["Authorization": "Bearer \(session.token)"]))
            }
        }
        #expect(held.allSatisfy { $0.status == 200 })
        let late = try navd.createSession()
        let refused = try navd.request("GET", late.url + "/events?after=5&wait=30", headers: ["Authorization": "Bearer \(late.token)"])
        #expect(refused.status == 503)
        #expect(refused.code == "over_capacity")
        #expect(refused.headers["retry-after"] != nil)
        // Ordinary requests still find a connection.
        #expect(try navd.request("GET", "/healthz").status == 200)
        #expect(try navd.navigate(late, "help").status == 200)
        #expect(try Self.metric(navd, "navd_budget_used{resource=\"watchers\"} ") == 8)
        for stream in held { stream.close() }
        held = []
        #expect(try Self.waitForWatchers(navd, within: 3) { $0 == 0 })
        #expect(try Self.metric(navd, "navd_budget_used{resource=\"watchers\"} ") == 0)
        #expect(try navd.stop() == 0)
    }

    @Test(arguments: ["memory", "sqlite"])
    func aLongPollTheDaemonStopsUnderAnswers503ShuttingDown(store: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-watchers-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let navd = try DaemonHarness(store: store == "memory" ? "memory" : "sqlite:\(directory.path)/navd.db")
        let session = try navd.createSession()
        let auth = ["Authorization": "Bearer \(session.token)"]
        let waiting = OnThread { try navd.request("GET", session.url + "/events?after=5&wait=30", headers: auth) }
        #expect(try Self.waitForWatchers(navd, within: 5) { $0 == 1 })
        navd.send(SIGTERM)
        let answer = try waiting.value()
        #expect(answer.status == 503)
        #expect(answer.code == "shutting_down")
        #expect(answer.headers["content-type"] == "application/problem+json")
        #expect(answer.headers["retry-after"] != nil)
        #expect(try navd.stop() == 0)
    }

    @Test func aLongPollPastTheNewestEventWaitsForTheNextOne() throws {
        let navd = try DaemonHarness()
        let session = try navd.createSession()
        let auth = ["Authorization": "Bearer \(session.token)"]
        // The page past the end answers from the end: `next` is the newest event, honestly.
        let page = try navd.request("GET", session.url + "/events?after=1000", headers: auth).json()
        #expect(page["events"]?.array == [])
        #expect(page["next"]?.int == 5)
        // The long poll answers with the next event, not with nothing after its wait.
        let waiting = OnThread { try navd.request("GET", session.url + "/events?after=1000&wait=20", headers: auth) }
        #expect(try Self.waitForWatchers(navd, within: 5) { $0 == 1 })
        let started = Date()
        #expect(try navd.navigate(session, "help").status == 200)
        let answer = try waiting.value()
        #expect(Date().timeIntervalSince(started) < 10)
        let json = try answer.json()
        #expect(json["events"]?[0]?["seq"]?.int == 6)
        #expect(json["next"]?.int == (json["events"]?.array?.last?["seq"]?.int ?? -1))
        #expect(try navd.stop() == 0)
    }
}

/// Content negotiation of the events route, in process (no stream is opened when none is asked).
@Suite struct EventNegotiationTests {
    @Test func anEventStreamWeightedZeroOrBelowJSONIsNotAStream() throws {
        let navd = try startNavd()
        let session = try navd.createSession()
        for accept in [
            "text/event-stream;q=0", "text/event-stream; q=0.0", "text/event-stream;q=0.5, application/json",
            "application/json, text/event-stream;q=0.9", "text/event-stream;q=abc"
        ] {
            // A stream cannot be carried in process: a refusal to carry it would throw here.
            let answer = try navd.request(
                "GET", session.url + "/events", headers: ["Authorization": "Bearer \(session.token)", "Accept": accept])
            #expect(answer.status == 200, "\(accept)")
            #expect(answer.headers["content-type"] == "application/json", "\(accept)")
            #expect(try answer.json()["next"]?.int == 5, "\(accept)")
        }
        #expect(try navd.stop() == 0)
    }
}
