import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A client of a session's event stream over a real socket, as a browser's EventSource would be:
/// sends the GET, reads the head, then de-chunks the body and splits it into server-sent-event
/// messages (WHATWG HTML §9.2: `field: value` lines, a blank line ends a message, `:` starts a
/// comment).
final class EventStreamClient {
    struct Message: Equatable, CustomStringConvertible {
        /// `view`, `lifecycle`, `end`; `comment` for a `: …` line; `retry` for a `retry:` hint.
        var event: String
        var id: String?
        var data: String

        var json: JSON? { try? JSON(parsing: Array(data.utf8)) }
        var description: String { "\(event)\(id.map { " #\($0)" } ?? ""): \(data.prefix(160))" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let status: Int
    let head: String
    private let socket: Int32
    /// Body bytes de-chunked and not yet split into messages.
    private var text: [UInt8] = []
    /// Raw bytes read and not yet de-chunked.
    private var raw: [UInt8] = []
    private(set) var ended = false

    /// Opens the stream of `target` (`/v1/sessions/{id}/events…`) with `Accept: text/event-stream`.
    init(port: Int, target: String, headers: [String: String] = [:], timeout: Int = 10) throws {
        guard case .success(let socket) = Loopback.connect(port: port, timeout: timeout) else {
            throw Failure(description: "cannot connect to port \(port)")
        }
        self.socket = socket
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard Glibc.send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            Glibc.close(socket)
            throw Failure(description: "send failed")
        }
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            guard let chunk = try Self.receive(socket) else {
                Glibc.close(socket)
                throw Failure(description: "the connection closed before the head: \(String(decoding: buffer, as: UTF8.self))")
            }
            buffer += chunk
            headEnd = Self.find(Array("\r\n\r\n".utf8), in: buffer)
        }
        let end = headEnd ?? 0
        head = String(decoding: buffer[..<end], as: UTF8.self)
        status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        raw = Array(buffer[(end + 4)...])
    }

    deinit {
        Glibc.close(socket)
    }

    /// The value of a header of the answer's head (name in any case).
    func header(_ name: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// The next message, comments included; nil when the stream ended (its last chunk came).
    /// - Throws: when nothing arrives within the socket's timeout.
    func next() throws -> Message? {
        while true {
            if let message = takeMessage() { return message }
            if ended { return nil }
            try fill()
        }
    }

    /// The next message that is not a comment or retry hint.
    /// - Throws: when only heartbeats come for `seconds`.
    func nextMessage(within seconds: Double = 10) throws -> Message? {
        let deadline = Date().addingTimeInterval(seconds)
        while let message = try next() {
            if message.event != "comment", message.event != "retry" { return message }
            if Date() > deadline { throw Failure(description: "only heartbeats for \(seconds) s") }
        }
        return nil
    }

    /// The `seq`s of lifecycle messages up to and including `last` (other messages skipped).
    func lifecycleSeqs(through last: Int) throws -> [Int] {
        var seqs: [Int] = []
        while seqs.last.map({ $0 < last }) ?? true {
            guard let message = try nextMessage() else { break }
            if message.event == "lifecycle", let seq = message.id.flatMap(Int.init) { seqs.append(seq) }
        }
        return seqs
    }

    /// Messages up to and including the first `view` (or the end).
    func untilView() throws -> [Message] {
        var messages: [Message] = []
        while let message = try nextMessage() {
            messages.append(message)
            if message.event == "view" || message.event == "end" { break }
        }
        return messages
    }

    func close() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    // MARK: Parsing

    private func takeMessage() -> Message? {
        guard let end = Self.find(Array("\n\n".utf8), in: text) else { return nil }
        let block = String(decoding: text[..<end], as: UTF8.self)
        text.removeFirst(end + 2)
        var message = Message(event: "message", id: nil, data: "")
        var data: [String] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                return Message(event: "comment", id: nil, data: String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
            }
            let (field, value) = line.firstIndex(of: ":").map { (String(line[..<$0]), String(line[line.index(after: $0)...].drop { $0 == " " })) } ?? (String(line), "")
            switch field {
            case "event": message.event = value
            case "id": message.id = value
            case "data": data.append(value)
            case "retry": return Message(event: "retry", id: nil, data: value)
            default: break
            }
        }
        message.data = data.joined(separator: "\n")
        return message
    }

    /// De-chunks what is complete (the head's read may have brought body bytes along), reading
    /// more when nothing is.
    private func fill() throws {
        if try dechunk() { return }
        guard let chunk = try Self.receive(socket) else {
            if raw.isEmpty {
                ended = true
                return
            }
            throw Failure(description: "the connection closed inside a chunk")
        }
        raw += chunk
        _ = try dechunk()
    }

    /// Moves every complete chunk of `raw` to `text`. - Returns: whether anything moved or ended.
    private func dechunk() throws -> Bool {
        var moved = false
        while let lineEnd = Self.find(Array("\r\n".utf8), in: raw) {
            let sizeText = String(decoding: raw[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16) else { throw Failure(description: "bad chunk size '\(sizeText)'") }
            guard raw.count >= lineEnd + 2 + size + 2 else { break }
            if size == 0 {
                ended = true
                raw.removeAll()
                return true
            }
            text += raw[(lineEnd + 2)..<(lineEnd + 2 + size)]
            raw.removeFirst(lineEnd + 2 + size + 2)
            moved = true
        }
        return moved
    }

    /// Bytes from the socket; nil when it closed. - Throws: when nothing came within the timeout.
    private static func receive(_ socket: Int32) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
        if count > 0 { return Array(buffer[..<count]) }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { throw Failure(description: "nothing arrived in time") }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
