import Foundation
import Logging
import Synchronization
import Testing

@testable import NavHTTP
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Clients that hang up while their connection is suspended (an idle stream, a long poll with no
/// answer yet) are noticed at once, not at the next write or when the wait ends, and their
/// connection is closed (docs/design.md, "Watchers"); and the bytes streams buffer stay within
/// one budget, the largest holder dropped first ("Bytes buffered for watchers").
@Suite(.serialized) struct HangupTests {
    /// `/stream` answers with a stream, `/wait` with a deferred answer, both handed to the test;
    /// anything else with a plain `ok`.
    final class Handler: HTTPHandler {
        let streams = StreamHandler.Opened()
        let waiting = Mutex<[DeferredResponse]>([])

        func handle(_ request: consuming HTTPRequest) -> HTTPResponse {
            switch request.path {
            case "/stream":
                let stream = ResponseStream()
                streams.add(stream)
                return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], stream: stream)
            case "/wait":
                let deferred = DeferredResponse()
                waiting.withLock { $0.append(deferred) }
                return HTTPResponse(deferred: deferred)
            default:
                return HTTPResponse(status: 200, body: Array("ok".utf8))
            }
        }

        /// The first deferred answer handed out and not yet taken, waiting up to 5 s for it.
        func nextWaiting() throws -> DeferredResponse {
            for _ in 0..<500 {
                if let deferred = waiting.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return deferred }
                Thread.sleep(forTimeInterval: 0.01)
            }
            throw StreamClient.Failure(description: "no deferred answer was handed out")
        }

        func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }
        func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse { HTTPResponse(status: 400) }
        func unsupportedTransferCoding(_ request: HTTPRequest, coding: String) -> HTTPResponse { HTTPResponse(status: 501) }
    }

    static func start() throws -> (HTTPServer, Handler) {
        let handler = Handler()
        let server = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 30, shutdownGracePeriod: 5),
            handler: handler, logger: StreamingResponseTests.logger
        )
        try server.start()
        return (server, handler)
    }

    /// Waits up to `seconds` for `condition`. - Returns: the seconds it took, or nil.
    static func within(_ seconds: Double, _ condition: () -> Bool) -> Double? {
        let started = Date()
        while Date().timeIntervalSince(started) < seconds {
            if condition() { return Date().timeIntervalSince(started) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    @Test func anIdleStreamWhoseClientHangsUpIsClosedWithoutAWrite() throws {
        let (server, handler) = try Self.start()
        defer { server.stop() }
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readHead()
        let stream = try handler.streams.next()
        let closed = Atomic<Bool>(false)
        stream.onClose { closed.store(true, ordering: .relaxed) }
        #expect(stream.write(Array("first\n".utf8)))
        #expect(try client.readChunk() == "first\n")
        // Suspended now: nothing to send. The client leaves; nothing is written after it.
        Thread.sleep(forTimeInterval: 0.2)
        client.close()
        let noticed = Self.within(2) { closed.load(ordering: .relaxed) }
        #expect(noticed != nil, "the stream's close handler did not run within 2 s of the hang-up")
        #expect(!stream.isOpen)
        #expect(!stream.write(Array("late\n".utf8)))
    }

    @Test func aLongPollWhoseClientHangsUpIsLetGoAndItsConnectionClosed() throws {
        let (server, handler) = try Self.start()
        defer { server.stop() }
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
        let deferred = try handler.nextWaiting()
        let hungUp = Atomic<Bool>(false)
        deferred.onHangUp { hungUp.store(true, ordering: .relaxed) }
        Thread.sleep(forTimeInterval: 0.2)
        client.close()
        let noticed = Self.within(2) { hungUp.load(ordering: .relaxed) }
        #expect(noticed != nil, "the deferred answer was not told of the hang-up within 2 s")
        #expect(deferred.isResolved)
        // An answer given later goes nowhere and is refused.
        #expect(!deferred.resolve(HTTPResponse(status: 200)))
        // The server still answers everyone else.
        let other = try StreamClient(port: server.boundPort)
        try other.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try other.readHead().contains("200"))
    }

    /// A client that sent its next request behind a long poll (pipelining) has not hung up: it is
    /// answered in turn.
    @Test func aPipelinedRequestIsNoHangup() throws {
        let (server, handler) = try Self.start()
        defer { server.stop() }
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\nGET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        let deferred = try handler.nextWaiting()
        let hungUp = Atomic<Bool>(false)
        deferred.onHangUp { hungUp.store(true, ordering: .relaxed) }
        Thread.sleep(forTimeInterval: 1)
        let hungUpNow = hungUp.load(ordering: .relaxed)
        #expect(!hungUpNow)
        #expect(deferred.resolve(HTTPResponse(status: 200, body: Array("late".utf8))))
        #expect(try client.readHead().contains("200"))
        #expect(try client.readBody(count: 4) == Array("late".utf8))
        #expect(try client.readHead().contains("200"))
    }

    /// Many connections hung up while suspended, streams and long polls: every one is let go, and
    /// the server's descriptors fall back.
    @Test func manyHangupsFreeEveryConnection() throws {
        let (server, handler) = try Self.start()
        defer { server.stop() }
        let before = Self.openDescriptors()
        var clients: [StreamClient] = []
        for index in 0..<200 {
            let client = try StreamClient(port: server.boundPort)
            try client.send("GET \(index % 2 == 0 ? "/wait" : "/stream") HTTP/1.1\r\nHost: x\r\n\r\n")
            clients.append(client)
        }
        var streams: [ResponseStream] = []
        var answers: [DeferredResponse] = []
        for index in 0..<200 {
            if index % 2 == 0 { answers.append(try handler.nextWaiting()) } else { streams.append(try handler.streams.next()) }
        }
        #expect(Self.openDescriptors() >= before + 200)
        for client in clients { client.close() }
        clients = []
        let freed = Self.within(3) {
            streams.allSatisfy { !$0.isOpen } && answers.allSatisfy(\.isResolved) && Self.openDescriptors() <= before + 10
        }
        #expect(
            freed != nil,
            "still open: \(streams.filter(\.isOpen).count) streams, \(answers.filter { !$0.isResolved }.count) long polls, \(Self.openDescriptors() - before) descriptors"
        )
    }

    /// The descriptors this process holds.
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    // MARK: Bytes buffered for streams

    final class Bytes: ByteBudget, @unchecked Sendable {
        let limit: Int
        private let held = Atomic<Int>(0)
        init(limit: Int) { self.limit = limit }
        var used: Int { held.load(ordering: .relaxed) }
        func force(_ amount: Int) -> Int { held.add(amount, ordering: .relaxed).newValue }
        func release(_ amount: Int) { held.subtract(amount, ordering: .relaxed) }
    }

    @Test func whenThePoolIsFullTheStreamHoldingTheMostIsShedNotTheOneThatWroteLast() throws {
        let budget = Bytes(limit: 64 << 10)
        let pool = StreamBuffers(budget: budget)
        let farewell = Array("event: end\ndata: {\"reason\":\"lagging\"}\n\n".utf8)
        let hoarder = ResponseStream(pool: pool, farewell: farewell)
        let modest = ResponseStream(pool: pool, farewell: farewell)
        let newcomer = ResponseStream(pool: pool, farewell: farewell)
        for stream in [hoarder, modest, newcomer] { pool.opened(stream) }
        let shed = Atomic<Int>(0)
        hoarder.onShed { shed.add(1, ordering: .relaxed) }
        for _ in 0..<10 { #expect(hoarder.write([UInt8](repeating: 1, count: 5000))) }
        #expect(modest.write([UInt8](repeating: 2, count: 8000)))
        #expect(budget.used >= 58_000)
        // The write that takes the pool past its limit: the hoarder goes, the writer stays.
        #expect(newcomer.write([UInt8](repeating: 3, count: 8000)))
        let sheds = shed.load(ordering: .relaxed)
        #expect(sheds == 1)
        #expect(!hoarder.isOpen)
        #expect(modest.isOpen && newcomer.isOpen)
        #expect(budget.used <= budget.limit)
        // What the hoarder still holds is its farewell only: nothing of it had been sent.
        #expect(hoarder.bufferedCount == farewell.count)
        // Every stream's bytes are given back as they are sent or dropped.
        for stream in [hoarder, modest, newcomer] { stream.detach() }
        #expect(budget.used == 0)
    }
}
