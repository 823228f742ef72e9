import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Attacks on watchers against the binary (docs/design.md, "Watchers" and "Bytes buffered for
/// watchers"): thousands of long polls and streams opened and dropped at once, a watch token as
/// a browser's URL would carry it; and watchers that never read while large views keep coming.
/// Only what does not depend on the machine's speed is asserted: slots and descriptors come back,
/// ordinary requests are answered throughout, the buffer budget holds, and every change that was
/// acknowledged can be read.
@Suite(.serialized) struct WatcherAbuseTests {
    /// Room for 500 watchers and no heartbeat to find dead clients: only the hang-up watch and the
    /// budgets keep the daemon whole.
    static let arguments = ["--max-connections", "1000", "--heartbeat", "600"]

    static func metric(_ navd: DaemonHarness, _ prefix: String) throws -> Int { try WatcherTests.metric(navd, prefix) }

    /// Waits up to `seconds` for every watcher slot and the watchers' descriptors to come back.
    static func settled(_ navd: DaemonHarness, descriptors: Int, within seconds: Double) throws -> Bool {
        let started = Date()
        repeat {
            if try metric(navd, "navd_watchers ") == 0, try metric(navd, "navd_budget_used{resource=\"watchers\"} ") == 0,
                try metric(navd, "process_open_fds ") <= descriptors + 4
            {
                return true
            }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date().timeIntervalSince(started) < seconds
        return false
    }

    @Test func thousandsOfLongPollsAndStreamsDroppedAtOnceLeaveNothingBehind() throws {
        let navd = try DaemonHarness(arguments: Self.arguments)
        let sessions = try (0..<20).map { _ in try navd.createSession() }
        let descriptors = try Self.metric(navd, "process_open_fds ")
        var opened = 0
        for round in 0..<12 {
            var connections: [HTTPConnection] = []
            for index in 0..<250 {
                let session = sessions[index % sessions.count]
                let watchToken = session.created["watchToken"]?.string ?? ""
                // Two rounds of long polls for one of streams, each with the watch token in its URL.
                let stream = round % 3 == 2
                let target = session.url + "/events?access_token=\(watchToken)" + (stream ? "" : "&after=1000&wait=60")
                connections.append(try WatcherTests.longPoll(navd, target, headers: stream ? ["Accept": "text/event-stream"] : [:]))
                opened += 1
            }
            // Ordinary requests find room while the watchers are held.
            #expect(try navd.request("GET", "/healthz").status == 200, "round \(round)")
            Thread.sleep(forTimeInterval: 0.1)
            for connection in connections { connection.close() }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(opened == 3000)
        let settled = try Self.settled(navd, descriptors: descriptors, within: 5)
        let (watchers, budget, descriptorsAfter) = (
            try Self.metric(navd, "navd_watchers "), try Self.metric(navd, "navd_budget_used{resource=\"watchers\"} "),
            try Self.metric(navd, "process_open_fds ")
        )
        #expect(settled, "watchers \(watchers), budget \(budget), descriptors \(descriptorsAfter) (\(descriptors) before)")
        #expect(try navd.request("GET", "/healthz").status == 200)
        for session in sessions.prefix(3) { #expect(try navd.navigate(session, "help").status == 200) }
        #expect(try navd.stop() == 0)
    }

    @Test func watchersThatNeverReadLargeViewsStayWithinTheBufferBudget() throws {
        // A small buffer budget, and contexts large enough for 58 KB views.
        let navd = try DaemonHarness(arguments: Self.arguments + ["--max-watcher-buffer", "256K", "--max-context", "65536"])
        let blob = String(repeating: "x", count: 58_000)
        let sessions = [try navd.createSession(context: ["blob": .string(blob)])]
        let limit = try Self.metric(navd, "navd_budget_limit{resource=\"watcher_buffer_bytes\"} ")
        #expect(limit == 256 << 10)
        // Six watchers that read nothing, with a small receive buffer: what navd sends
        // them stays in navd.
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for session in sessions {
            for _ in 0..<6 {
                guard case .success(let socket) = Loopback.connect(port: navd.port, timeout: 5, receiveBuffer: 4096) else {
                    Issue.record("cannot connect")
                    continue
                }
                sockets.append(socket)
                let request = Array(
                    "GET \(session.url)/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(session.token)\r\n\r\n"
                        .utf8)
                _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
        #expect(try WatcherTests.waitForWatchers(navd, within: 5) { $0 == 6 })
        // Large views, one change after another: each acknowledged, each a view of 58 KB for six watchers.
        var acknowledged: [String: Int] = [:]
        for round in 0..<10 {
            for session in sessions {
                // Not held to the spec here (other tests do that): parsing 58 KB answers in the test
                // would take longer than navd takes to give them.
                let patch: JSON = ["blob": .string(blob + String(round)), "round": .int(round)]
                let answer = try navd.request(
                    "PATCH", session.url + "/context",
                    headers: ["Authorization": "Bearer \(session.token)", "Content-Type": "application/merge-patch+json"],
                    body: patch.bytes, validate: false
                )
                #expect(answer.status == 200)
                if answer.status == 200, let etag = answer.headers["etag"] { acknowledged[session.id] = Int(etag.filter(\.isNumber)) }
            }
            #expect(try navd.request("GET", "/healthz").status == 200)
        }
        // Within the budget (the writes have all been made), the hoarders dropped as lagging. Eleven
        // views of 58 KB a watcher: more than the kernel's socket buffers take on loopback (they took
        // 180 KB a socket here), less than they take plus a stream's own bound of 512 KiB, so it is
        // the budget that drops them.
        Thread.sleep(forTimeInterval: 0.2)
        let used = try Self.metric(navd, "navd_budget_used{resource=\"watcher_buffer_bytes\"} ")
        #expect(used <= limit, "\(used) bytes buffered for watchers, over the budget of \(limit)")
        #expect(try Self.metric(navd, "navd_watchers_dropped_total ") > 0)
        // Every acknowledged change is there to read.
        for session in sessions {
            let read = try navd.request("GET", session.url, headers: ["Authorization": "Bearer \(session.token)"], validate: false)
            #expect(read.headers["etag"].map { Int($0.filter(\.isNumber)) } == acknowledged[session.id])
            #expect(read.text.contains(#""round":9"#))
            #expect(try navd.events(session, after: 0).status == 200)
        }
        // The clients leave: their slots and their bytes come back.
        for socket in sockets { close(socket) }
        sockets = []
        let started = Date()
        var settled = false
        while !settled, Date().timeIntervalSince(started) < 5 {
            settled =
                try Self.metric(navd, "navd_watchers ") == 0
                && Self.metric(navd, "navd_budget_used{resource=\"watcher_buffer_bytes\"} ") == 0
            if !settled { Thread.sleep(forTimeInterval: 0.05) }
        }
        let (watchers, bytes) = (
            try Self.metric(navd, "navd_watchers "), try Self.metric(navd, "navd_budget_used{resource=\"watcher_buffer_bytes\"} ")
        )
        #expect(settled, "watchers \(watchers), bytes \(bytes)")
        #expect(try navd.stop() == 0)
    }
}
