import Foundation
import Logging
import Synchronization
import Testing

@testable import NavHTTP
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A response body written while it is sent (``ResponseStream``), over a real socket: chunks
/// arrive as they are written, the connection waits suspended in between, a client that leaves
/// or cannot keep up is let go, and stopping the server ends every stream.
@Suite(.serialized) struct StreamingResponseTests {
    @Test func chunksArriveAsTheyAreWrittenAndTheConnectionIsKeptAfterwards() throws {
        let (server, streams) = try Self.start()
        defer { server.stop() }
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readHead()
        #expect(head.contains("200"))
        #expect(head.lowercased().contains("transfer-encoding: chunked"))
        #expect(head.lowercased().contains("content-type: text/event-stream"))
        let stream = try streams.next()

        #expect(stream.write(Array("first\n".utf8)))
        #expect(try client.readChunk() == "first\n")
        // Nothing written for a while: the connection waits (suspended) and is resumed by a write.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(stream.write(Array("second\n".utf8)))
        #expect(try client.readChunk() == "second\n")
        stream.finish()
        #expect(try client.readChunk() == "")
        #expect(!stream.isOpen)
        #expect(!stream.write(Array("late".utf8)))

        // The same connection answers the next request.
        try client.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        let next = try client.readHead()
        #expect(next.contains("200"))
    }

    @Test func aClientThatLeavesIsNoticedOnTheNextWrites() throws {
        let (server, streams) = try Self.start()
        defer { server.stop() }
        let (client, stream) = try Self.openStream(server, streams)
        let closed = Atomic<Bool>(false)
        stream.onClose { closed.store(true, ordering: .relaxed) }
        client.close()
        // Heartbeats: the server learns the client is gone when it sends to it.
        var refused = false
        for _ in 0..<200 where !refused {
            refused = !stream.write(Array(": ping\n\n".utf8))
            Thread.sleep(forTimeInterval: 0.02)
        }
        let closeHandlerRan = closed.load(ordering: .relaxed)
        #expect(refused)
        #expect(closeHandlerRan)
    }

    @Test func aReaderThatCannotKeepUpIsDropped() throws {
        let (server, streams) = try Self.start(bufferLimit: 4096)
        defer { server.stop() }
        let (client, stream) = try Self.openStream(server, streams)
        // The client reads nothing; the socket buffers fill, then the stream's own bound.
        let block = [UInt8](repeating: UInt8(ascii: "x"), count: 1024)
        var written = 0
        while stream.write(block), written < 64 << 20 { written += block.count }
        #expect(written < 64 << 20, "a stream nobody reads took \(written) bytes")
        #expect(!stream.isOpen)
        #expect(try client.readsToTheEnd())
    }

    /// A message larger than the whole buffer goes to a reader that keeps up (it arrives whole),
    /// where refusing it would cut the stream at every resume; one past the buffer while more
    /// than half of it waits still drops the reader.
    @Test func aMessageLargerThanTheBufferGoesToAReaderThatKeepsUp() throws {
        let (server, streams) = try Self.start(bufferLimit: 4096)
        defer { server.stop() }
        let (client, stream) = try Self.openStream(server, streams)
        let large = String(repeating: "y", count: 10_000)
        let taken = stream.write(Array(large.utf8))
        #expect(taken)
        // However libmicrohttpd cuts it into chunks, all of it arrives.
        var received = ""
        while received.utf8.count < large.utf8.count {
            let chunk = try client.readChunk()
            if chunk.isEmpty { break }
            received += chunk
        }
        #expect(received == large)
        let offline = ResponseStream(bufferLimit: 4096)
        #expect(offline.write([UInt8](repeating: 1, count: 3000)))
        #expect(!offline.write([UInt8](repeating: 2, count: 10_000)))
        #expect(!offline.isOpen)
    }

    @Test func stoppingTheServerEndsEveryStream() throws {
        let (server, streams) = try Self.start()
        let (client, stream) = try Self.openStream(server, streams)
        #expect(stream.write(Array("last words\n".utf8)))
        let started = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - started < .seconds(3))
        #expect(!stream.isOpen)
        #expect(try client.readChunk() == "last words\n")
    }

    /// A client without chunked transfer coding (HTTP/1.0) gets the body through MHD's block of
    /// `streamBlockSize` bytes, a block per read: a message several blocks long arrives whole,
    /// and the end of the stream closes the connection.
    @Test func anHTTP10ClientGetsMessagesLongerThanTheStreamBlockWhole() throws {
        let (server, streams) = try Self.start()
        defer { server.stop() }
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /stream HTTP/1.0\r\nHost: x\r\n\r\n")
        let stream = try streams.next()
        let message = (0..<5 * streamBlockSize).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        #expect(stream.write(message))
        stream.finish()
        let head = try client.readHead()
        #expect(head.contains("200"))
        #expect(!head.lowercased().contains("transfer-encoding: chunked"))
        #expect(try client.readToTheEnd() == message)
    }

    /// The pool's polling modes (`NAVD_HTTP_POLLING`, kept for the benchmarks) answer plain requests
    /// and streams, suspending and resuming the connection in between. Not `threads`: there MHD
    /// 0.9.75 can lose a resume's wake-up (``HTTPServer/Polling/threads``), and a connection thread
    /// that missed it keeps `stop()` waiting for good.
    @Test(arguments: [HTTPServer.Polling.poll, .epoll])
    func everyPollingModeServesRequestsAndStreams(_ polling: HTTPServer.Polling) throws {
        let (server, streams) = try Self.start(polling: polling)
        defer { server.stop() }
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readHead().contains("200"))
        _ = try client.readBody(count: 2)
        try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readHead()
        let stream = try streams.next()
        #expect(stream.write(Array("one\n".utf8)))
        #expect(try client.readChunk() == "one\n")
        Thread.sleep(forTimeInterval: 0.1)
        #expect(stream.write(Array("two\n".utf8)))
        #expect(try client.readChunk() == "two\n")
        stream.finish()
        #expect(try client.readChunk() == "")
    }

    // MARK: Fixture

    static let logger: Logger = {
        var logger = Logger(label: "navd.test.stream")
        logger.logLevel = .warning
        return logger
    }()

    /// A client on `server` that asked for `/stream` and read the head of its answer, and that
    /// stream.
    static func openStream(_ server: HTTPServer, _ streams: StreamHandler.Opened) throws -> (StreamClient, ResponseStream) {
        let client = try StreamClient(port: server.boundPort)
        try client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readHead()
        return (client, try streams.next())
    }

    static func start(bufferLimit: Int = 1 << 20, polling: HTTPServer.Polling = .poll) throws -> (HTTPServer, StreamHandler.Opened) {
        let handler = StreamHandler(bufferLimit: bufferLimit)
        let server = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, threads: 2, connectionTimeout: 5, shutdownGracePeriod: 5, polling: polling),
            handler: handler,
            logger: logger
        )
        try server.start()
        return (server, handler.opened)
    }
}

/// `/stream` answers with a new stream, handed to the test through ``Opened``; anything else
/// with a plain `ok`.
struct StreamHandler: HTTPHandler {
    final class Opened: Sendable {
        private let streams = Mutex<[ResponseStream]>([])

        func add(_ stream: ResponseStream) { streams.withLock { $0.append(stream) } }

        /// The first stream opened and not yet taken, waiting up to 5 s for it.
        func next() throws -> ResponseStream {
            for _ in 0..<500 {
                if let stream = streams.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return stream }
                Thread.sleep(forTimeInterval: 0.01)
            }
            throw StreamClient.Failure(description: "no stream was opened")
        }
    }

    let bufferLimit: Int
    let opened = Opened()

    func handle(_ request: consuming HTTPRequest) -> HTTPResponse {
        guard request.path == "/stream" else { return HTTPResponse(status: 200, body: Array("ok".utf8)) }
        let stream = ResponseStream(bufferLimit: bufferLimit)
        opened.add(stream)
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")], stream: stream)
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse { HTTPResponse(status: 413) }

    func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse { HTTPResponse(status: 400) }

    func unsupportedTransferCoding(_ request: HTTPRequest, coding: String) -> HTTPResponse { HTTPResponse(status: 501) }
}

/// A blocking client that reads a response head and then its body chunk by chunk.
final class StreamClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private var socket: Int32
    private var buffered: [UInt8] = []

    init(port: UInt16) throws {
        // A small receive buffer, so that a client that reads nothing fills it soon.
        switch Loopback.connect(port: Int(port), timeout: 5, receiveBuffer: 4096) {
        case .success(let fd): socket = fd
        case .failure(let error): throw Failure(description: "connect: errno \(error.code)")
        }
    }

    deinit { close() }

    func close() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw Failure(description: "send: errno \(errno)") }
    }

    /// The status line and headers, up to the blank line.
    func readHead() throws -> String {
        String(decoding: try readUntil(Array("\r\n\r\n".utf8)), as: UTF8.self)
    }

    /// One chunk's data; "" for the last chunk (its trailer read too).
    func readChunk() throws -> String {
        let sizeLine = String(decoding: try readUntil(Array("\r\n".utf8)), as: UTF8.self)
        guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw Failure(description: "bad chunk size \(sizeLine)") }
        if size == 0 {
            _ = try readUntil(Array("\r\n".utf8))
            return ""
        }
        while buffered.count < size + 2 {
            guard try fill() else { throw Failure(description: "closed inside a chunk") }
        }
        let data = Array(buffered[..<size])
        buffered.removeFirst(size + 2)
        return String(decoding: data, as: UTF8.self)
    }

    /// `count` bytes of a body with a `Content-Length`.
    func readBody(count: Int) throws -> [UInt8] {
        while buffered.count < count {
            guard try fill() else { throw Failure(description: "closed inside a body") }
        }
        let body = Array(buffered[..<count])
        buffered.removeFirst(count)
        return body
    }

    /// Everything left until the server closes the connection.
    func readToTheEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffered = [] }
        return buffered
    }

    /// Reads until the server closes the connection; false if it did not within the timeout.
    func readsToTheEnd() throws -> Bool {
        while true {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    private func readUntil(_ separator: [UInt8]) throws -> [UInt8] {
        while true {
            if let range = buffered.firstRange(of: separator) {
                let text = Array(buffered[..<range.lowerBound])
                buffered.removeSubrange(..<range.upperBound)
                return text
            }
            guard try fill() else { throw Failure(description: "connection closed") }
        }
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw Failure(description: "recv: errno \(errno)") }
        buffered += chunk[..<count]
        return count > 0
    }
}
