import Foundation
import Logging
import Testing

@testable import NavHTTP
@testable import NavSessions
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `--header-timeout`: a request must arrive whole within a fixed time. libmicrohttpd's idle
/// timeout is reset by every byte, so clients trickling one header byte every few seconds held
/// every connection slot and kept everyone else waiting for as long as they trickled.
@Suite(.serialized) struct RequestDeadlineTests {
    @Test func tricklingClientsAtTheCeilingDoNotLockOthersOut() throws {
        let navd = try DaemonHarness(arguments: [
            "--threads", "1", "--max-connections", "4", "--header-timeout", "1", "--connection-timeout", "30"
        ])
        // Every slot taken by a client that sends one byte of its headers every 300 ms for 8 s.
        let trickled = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "a", count: 100)
        let tricklers = Tricklers()
        for _ in 0..<4 {
            let connection = try HTTPConnection(port: navd.port, timeout: 10)
            try connection.send(Array("G".utf8))
            tricklers.connections.append(connection)
        }
        let done = DispatchSemaphore(value: 0)
        let trickling = Thread {
            tricklers.trickle(Array(trickled.utf8), every: 0.3, for: 8)
            done.signal()
        }
        trickling.start()
        Thread.sleep(forTimeInterval: 0.3)

        // A fresh client is served within a bounded time, not after the tricklers give up.
        let started = Date()
        let fresh = try HTTPConnection(port: navd.port, timeout: 10)
        try fresh.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        let answer = try fresh.readResponse()
        let waited = Date().timeIntervalSince(started)
        #expect(answer.status == 200)
        #expect(waited < 4, "the fresh client waited \(waited) s")

        // The tricklers were closed by the server, not answered (and so stopped trickling early).
        #expect(done.wait(timeout: .now() + 6) == .success)
        for trickler in tricklers.connections {
            #expect(throws: HTTPConnection.Failure.self) { _ = try trickler.readResponse() }
        }
        #expect(try navd.stop() == 0)
        #expect(navd.log.contains("closed connections whose request did not arrive in time"))
    }

    /// A request that arrives in time is answered however long its handling takes, and a
    /// keep-alive connection serves request after request as long as each comes in time.
    @Test func requestsThatArriveInTimeAreServed() throws {
        let navd = try DaemonHarness(arguments: ["--header-timeout", "1"])
        let connection = try HTTPConnection(port: navd.port, timeout: 10)
        for _ in 0..<3 {
            try connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            #expect(try connection.readResponse().status == 200)
            Thread.sleep(forTimeInterval: 0.6)
        }
        #expect(try navd.stop() == 0)
    }
}

/// Connections that send their request a byte at a time. `@unchecked Sendable`: the trickling
/// thread uses them alone until it signals that it is done.
private final class Tricklers: @unchecked Sendable {
    var connections: [HTTPConnection] = []

    /// Sends the next byte of `text` on every connection still open, every `interval` seconds,
    /// for `duration` seconds or until the server has closed them all.
    func trickle(_ text: [UInt8], every interval: Double, for duration: Double) {
        let started = Date()
        var open = Array(repeating: true, count: connections.count)
        var offset = 1
        while Date().timeIntervalSince(started) < duration, open.contains(true) {
            Thread.sleep(forTimeInterval: interval)
            let byte = text[offset % text.count]
            offset += 1
            for index in connections.indices where open[index] {
                if (try? connections[index].send([byte])) == nil { open[index] = false }
            }
        }
    }
}

/// The watchdog itself, on socket pairs: a connection is never closed before its deadline,
/// whenever in the watchdog's tick it started waiting.
@Suite struct RequestDeadlinesWatchdogTests {
    @Test func noConnectionIsClosedBeforeItsDeadline() throws {
        let deadlines = RequestDeadlines(seconds: 1, logger: Logger(label: "test"))
        deadlines.start()
        defer { deadlines.stop() }
        // Connections that start waiting at every phase of the watchdog's 250 ms tick.
        var pairs: [(ours: Int32, theirs: Int32, registered: Double, tracked: UnsafeMutableRawPointer)] = []
        defer {
            for pair in pairs {
                deadlines.unregister(pair.tracked)
                close(pair.ours)
                close(pair.theirs)
            }
        }
        for _ in 0..<12 {
            var fds: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            let registered = Clock.seconds()
            let tracked = deadlines.register(socket: fds[0])
            pairs.append((fds[0], fds[1], registered, tracked))
            // Its clock starts now, not at the watchdog's last tick (up to 250 ms earlier: closed
            // that much early whenever a later tick ran a millisecond late, as on a loaded machine).
            let since = Unmanaged<RequestDeadlines.Tracked>.fromOpaque(tracked).takeUnretainedValue().since.load(ordering: .relaxed)
            #expect(
                since >= Int64(registered * 1000),
                "the deadline counts from \(Int64(registered * 1000) - since) ms before the connection came")
            usleep(23_000)
        }
        // When each connection was shut (its peer reads the end of the stream).
        var closedAt = [Double?](repeating: nil, count: pairs.count)
        let giveUp = Clock.seconds() + 10
        while closedAt.contains(where: { $0 == nil }), Clock.seconds() < giveUp {
            var polled = pairs.map { pollfd(fd: $0.theirs, events: Int16(POLLIN), revents: 0) }
            _ = poll(&polled, nfds_t(polled.count), 5)
            let now = Clock.seconds()
            for (index, entry) in polled.enumerated() where closedAt[index] == nil && entry.revents != 0 {
                closedAt[index] = now
            }
        }
        for (index, pair) in pairs.enumerated() {
            let waited = try #require(closedAt[index], "connection \(index) was never closed") - pair.registered
            // Monotonic time at millisecond resolution: a millisecond's slack.
            #expect(waited >= 0.999, "connection \(index) was closed after \(waited) s, before its 1 s deadline")
        }
    }
}
