import Foundation
import NavHTTPClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One HTTP answer as a client sees it.
struct HTTPMessage: Sendable, CustomStringConvertible {
    var status: Int
    /// Lowercased names; repeated fields joined with ", ".
    var headers: [String: String]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as JSON, or `.null` (with the parse error recorded by the caller) when it is not.
    func json() throws -> JSON { try JSON(parsing: body) }

    /// The problem `code` of an error answer.
    var code: String? { (try? json())?["code"]?.string }

    var description: String { "\(status) \(headers["content-type"] ?? "-") \(text.prefix(400))" }
}

/// A small blocking HTTP/1.1 client over a POSIX socket: Foundation's `URLSession` is not
/// reliable on Linux, and raw sockets let the tests send bytes no well-behaved client would.
/// Answers are read by the CLI's own reader (`ResponseReader`), so the tests read navd's answers
/// as its command line does; only the sending is the tests' own.
final class HTTPConnection {
    enum Failure: Error, CustomStringConvertible {
        case connect(Int32)
        case send(Int32)
        /// The peer closed (or reset) the connection before a whole answer came.
        case closed(received: Int, errno: Int32)
        case timeout
        case malformed(String)

        init(_ failure: ResponseReader.Failure) {
            switch failure {
            case .closed(let received, let code): self = .closed(received: received, errno: code)
            case .timeout: self = .timeout
            case .failed(let code): self = .closed(received: 0, errno: code)
            case .malformed(let why): self = .malformed(why)
            }
        }

        var description: String {
            switch self {
            case .connect(let code): "connect failed: \(String(cString: strerror(code)))"
            case .send(let code): "send failed: \(String(cString: strerror(code)))"
            case .closed(let received, let code):
                "connection closed after \(received) bytes of the answer" + (code == 0 ? "" : " (\(String(cString: strerror(code))))")
            case .timeout: "no answer in time"
            case .malformed(let why): "malformed answer: \(why)"
            }
        }
    }

    private var fd: Int32
    private var reader: ResponseReader

    /// Connects to 127.0.0.1:`port`; reads and writes time out after `timeout` seconds.
    init(port: Int, timeout: Int = 10) throws {
        signal(SIGPIPE, SIG_IGN)
        switch Loopback.connect(port: port, timeout: timeout, sendTimeout: true) {
        case .success(let socket): fd = socket
        case .failure(let error): throw Failure.connect(error.code)
        }
        reader = ResponseReader(socket: fd)
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends every byte. - Throws: ``Failure/send(_:)`` when the peer is gone.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw Failure.send(errno)
            }
            offset += sent
        }
    }

    /// Reads one answer: status line, headers, then a body by `Content-Length`, chunked, or
    /// up to the close. `method` tells whether a body follows (`HEAD` has none).
    func readResponse(method: String = "GET") throws -> HTTPMessage {
        do {
            guard let head = try reader.head(method: method) else { throw Failure.closed(received: 0, errno: 0) }
            var headers: [String: String] = [:]
            for (name, value) in head.headers {
                let name = name.lowercased()
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            }
            return HTTPMessage(status: head.status, headers: headers, body: try reader.body())
        } catch let failure as ResponseReader.Failure {
            throw Failure(failure)
        }
    }

    /// True when the peer has closed the connection (a read returns end of file or a reset).
    func peerClosed() -> Bool {
        reader.peerClosed()
    }

    /// Everything the peer sends until it closes the connection, past what was read already.
    /// - Throws: ``Failure/timeout`` when the connection stays open.
    func readToEnd() throws -> [UInt8] {
        do {
            return try reader.readToEnd()
        } catch {
            throw Failure(error)
        }
    }
}

/// A TCP connection to 127.0.0.1, as every test client opens one.
enum Loopback {
    struct Failure: Error {
        /// The `errno` of the call that failed.
        var code: Int32
    }

    /// A connected socket whose reads (and with `sendTimeout`, writes) time out after `timeout`
    /// seconds; `receiveBuffer` sets `SO_RCVBUF` (a client that reads nothing then fills it soon).
    static func connect(port: Int, timeout: Int, sendTimeout: Bool = false, receiveBuffer: Int32? = nil) -> Result<Int32, Failure> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(code: errno)) }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if sendTimeout { setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size)) }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(fd)
            return .failure(Failure(code: code))
        }
        return .success(fd)
    }
}
