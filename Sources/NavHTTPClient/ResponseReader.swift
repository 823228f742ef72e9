import NavJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The head of an HTTP/1.1 answer: its status and header fields, as sent.
package struct ResponseHead: Sendable {
    package var status: Int
    package var headers: [(name: String, value: String)]

    /// The first field named `name` (in any case).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Reads HTTP/1.1 answers from a connected socket: the head, then the body by `Content-Length`,
/// de-chunked, or up to the close, whole or piece by piece as it arrives. The one reader of
/// answers navd's code has: the CLI's ``DaemonClient`` and the tests' clients (keep-alive,
/// pipelined, raw and event-stream) all read through it.
package struct ResponseReader {
    /// Why an answer could not be read.
    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// The peer closed (or reset: `errno`) the connection before the answer was whole.
        case closed(received: Int, errno: Int32)
        /// Nothing arrived within the socket's receive timeout.
        case timeout
        /// A read failed otherwise.
        case failed(errno: Int32)
        /// What arrived is not an HTTP/1.1 answer.
        case malformed(String)

        package var description: String {
            switch self {
            case .closed(let received, let code):
                "the connection closed after \(received) bytes of the answer" + (code == 0 ? "" : " (\(String(cString: strerror(code))))")
            case .timeout: "no answer in time"
            case .failed(let code): "reading the answer failed: \(String(cString: strerror(code)))"
            case .malformed(let why): "malformed answer: \(why)"
            }
        }
    }

    /// How the body of the answer being read ends.
    private enum Framing {
        case none
        case length(remaining: Int)
        case chunked
        case untilClose
        case done
    }

    package let socket: Int32
    /// Bytes read and not yet taken.
    private var buffer: [UInt8] = []
    private var framing = Framing.done
    /// The peer closed the connection (a read returned end of file).
    package private(set) var atEnd = false

    package init(socket: Int32) {
        self.socket = socket
    }

    /// Reads more bytes. - Returns: false at the end of the stream.
    package mutating func fill() throws(Failure) -> Bool {
        guard !atEnd else { return false }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
                return true
            }
            if count == 0 {
                atEnd = true
                return false
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw .timeout
            case ECONNRESET: throw .closed(received: buffer.count, errno: ECONNRESET)
            case let code: throw .failed(errno: code)
            }
        }
    }

    /// Bytes up to (not including) `separator`, taken with it; nil at the end of the stream.
    private mutating func take(until separator: [UInt8]) throws(Failure) -> [UInt8]? {
        var searched = 0
        while true {
            if buffer.count >= separator.count {
                for start in max(0, searched - separator.count + 1)...(buffer.count - separator.count)
                where buffer[start..<(start + separator.count)].elementsEqual(separator) {
                    let found = Array(buffer[..<start])
                    buffer.removeFirst(start + separator.count)
                    return found
                }
                searched = buffer.count
            }
            guard try fill() else { return nil }
        }
    }

    /// The next answer's head, and how its body ends (`method` tells whether one follows: `HEAD`
    /// has none). - Returns: nil when the connection closed before any byte of it.
    package mutating func head(method: String = "GET") throws(Failure) -> ResponseHead? {
        guard let head = try take(until: Array("\r\n\r\n".utf8)) else {
            if buffer.isEmpty { return nil }
            throw .closed(received: buffer.count, errno: 0)
        }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw .malformed("status line '\(lines.first?.prefix(80) ?? "")'")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: " \t")))
        }
        let answer = ResponseHead(status: status, headers: headers)
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) {
            framing = .none
        } else if answer.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            framing = .chunked
        } else if let length = answer.header("content-length").flatMap({ Int($0) }) {
            framing = .length(remaining: length)
        } else {
            framing = .untilClose
        }
        return answer
    }

    /// The next piece of the body as it arrives, de-chunked; nil once the body has ended.
    package mutating func nextPiece() throws(Failure) -> [UInt8]? {
        switch framing {
        case .none, .done:
            framing = .done
            return nil
        case .length(let remaining):
            guard remaining > 0 else {
                framing = .done
                return nil
            }
            if buffer.isEmpty, try !fill() { throw .closed(received: 0, errno: 0) }
            let count = min(remaining, buffer.count)
            let piece = Array(buffer[..<count])
            buffer.removeFirst(count)
            framing = .length(remaining: remaining - count)
            return piece
        case .chunked:
            guard let sizeLine = try take(until: Array("\r\n".utf8)) else { throw .closed(received: buffer.count, errno: 0) }
            let sizeText = String(decoding: sizeLine, as: UTF8.self).prefix { $0 != ";" }.trimmingCharacters(in: " \t")
            guard let size = Int(sizeText, radix: 16), size >= 0 else { throw .malformed("chunk size '\(sizeText.prefix(40))'") }
            if size == 0 {
                // The trailer section, up to its blank line.
                while let line = try take(until: Array("\r\n".utf8)), !line.isEmpty {}
                framing = .done
                return nil
            }
            while buffer.count < size + 2 {
                guard try fill() else { throw .closed(received: buffer.count, errno: 0) }
            }
            let piece = Array(buffer[..<size])
            buffer.removeFirst(size + 2)
            return piece
        case .untilClose:
            if buffer.isEmpty, try !fill() {
                framing = .done
                return nil
            }
            defer { buffer.removeAll() }
            return buffer
        }
    }

    /// The rest of the body, whole.
    package mutating func body() throws(Failure) -> [UInt8] {
        var body: [UInt8] = []
        while let piece = try nextPiece() { body += piece }
        return body
    }

    /// Everything the peer sends until it closes the connection, past what was read already.
    /// - Throws: ``Failure/timeout`` when the connection stays open.
    package mutating func readToEnd() throws(Failure) -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Whether the peer has closed the connection with nothing more to read.
    package mutating func peerClosed() -> Bool {
        guard buffer.isEmpty else { return false }
        return (try? fill()) != true
    }
}
