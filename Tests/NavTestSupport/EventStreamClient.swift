import Foundation
import NavHTTPClient

#if canImport(Glibc)
    import Glibc
#endif

/// A client of a session's event stream over a real socket, as a browser's EventSource would be:
/// sends the GET, then reads the answer and splits its body into server-sent-event messages with
/// the CLI's own reader and parser (`ResponseReader`, `EventStreamParser`), comments and `retry:`
/// hints included, so that a test sees the stream as sent.
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
    private let fields: ResponseHead
    private let socket: Int32
    private var reader: ResponseReader
    private var parser = EventStreamParser(includingComments: true)
    /// Messages parsed and not yet taken.
    private var parsed: [Message] = []
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
        reader = ResponseReader(socket: socket)
        let answer: ResponseHead?
        do {
            answer = try reader.head()
        } catch {
            Glibc.close(socket)
            throw Failure(description: "the head could not be read: \(error)")
        }
        guard let answer else {
            Glibc.close(socket)
            throw Failure(description: "the connection closed before the head")
        }
        fields = answer
        status = answer.status
    }

    deinit {
        Glibc.close(socket)
    }

    /// The value of a header of the answer's head (name in any case).
    func header(_ name: String) -> String? {
        fields.header(name)
    }

    /// The next message, comments included; nil when the stream ended (its last chunk came).
    /// - Throws: when nothing arrives within the socket's timeout.
    func next() throws -> Message? {
        while parsed.isEmpty {
            if ended { return nil }
            let piece: [UInt8]?
            do throws(ResponseReader.Failure) {
                piece = try reader.nextPiece()
            } catch .timeout {
                throw Failure(description: "nothing arrived in time")
            } catch {
                throw Failure(description: "the stream broke: \(error)")
            }
            guard let piece else {
                ended = true
                return nil
            }
            parsed += parser.feed(piece).map { Message(event: $0.event, id: $0.id, data: $0.data) }
        }
        return parsed.removeFirst()
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
}
