import CLibCrypto
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A webhook receiver in the test process: an HTTP/1.1 server on a loopback socket that checks
/// every request's Standard Webhooks signature with its own secrets (each secret's signature must
/// be there: after a rotation, both), keeps the CloudEvents it was sent, deduplicated by `id`, and
/// answers as its script says (a status, a hang, a dropped connection). The signature is worked
/// out here from the specification, with libcrypto's HMAC, not with navd's code.
final class WebhookReceiver: Sendable {
    enum Action: Sendable {
        /// Answers with this status.
        case answer(Int)
        /// Takes the batch (it counts as received) and answers this status so many seconds later.
        case answerAfter(Int, Double)
        /// Answers nothing for so many seconds, then closes the connection.
        case hang(Double)
        /// Closes the connection without an answer.
        case close

        /// The status it answers with; nil when it answers none.
        var status: Int? {
            switch self {
            case .answer(let status), .answerAfter(let status, _): status
            case .hang, .close: nil
            }
        }
    }

    /// One request as it arrived.
    struct Delivery: Sendable {
        var webhookID: String
        var timestamp: String
        var signatureValid: Bool
        var signatures: Int
        var contentType: String
        /// The events' ids, in order.
        var ids: [String]
        var events: [JSON]
        var action: String
        var arrived: Date
    }

    private struct State {
        var deliveries: [Delivery] = []
        /// Ids in first-arrival order, once each.
        var unique: [String] = []
        var seen: Set<String> = []
        var connections: [Int32] = []
        var closed = false
    }

    let port: Int
    let secrets: [[UInt8]]
    private let listener: Int32
    private let script: @Sendable (Int) -> Action
    private let state = Mutex(State())
    private let requests = Atomic<Int>(0)

    var url: String { "http://127.0.0.1:\(port)/hook" }

    /// - Parameter script: what to do with the n-th request (from 0), the signature aside: a
    ///   request whose signature does not check out is answered 401 (and not kept) unless the
    ///   script says otherwise.
    init(secrets: [[UInt8]], script: @escaping @Sendable (Int) -> Action = { _ in .answer(204) }) throws {
        self.secrets = secrets
        self.script = script
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw DaemonHarness.StartFailure(description: "socket: \(errno)") }
        var one: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 64) == 0 else { throw DaemonHarness.StartFailure(description: "bind/listen: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = socket
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { close() }

    /// Stops listening and drops every connection.
    func close() {
        let connections = state.withLock { state -> [Int32] in
            guard !state.closed else { return [] }
            state.closed = true
            return state.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in connections { shutdown(connection, Int32(SHUT_RDWR)) }
    }

    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    /// Every event id received and kept, once each, in the order first received.
    var uniqueIDs: [String] { state.withLock { $0.unique } }

    /// Waits until `condition` holds of the receiver, up to `seconds`. - Returns: whether it did.
    @discardableResult
    func wait(seconds: Double, until condition: (WebhookReceiver) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(self) { return true }
            usleep(20_000)
        }
        return condition(self)
    }

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let open = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.connections.append(connection)
                return true
            }
            guard open else {
                Glibc.close(connection)
                return
            }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { Glibc.close(connection) }
        var buffer: [UInt8] = []
        while let (headers, body) = Self.readRequest(connection, &buffer) {
            let index = requests.add(1, ordering: .relaxed).oldValue
            var delivery = check(headers: headers, body: body)
            var action = script(index)
            if !delivery.signatureValid, action.status != nil { action = .answer(401) }
            delivery.action = "\(action)"
            let keep = action.status.map { (200...299).contains($0) } ?? false
            state.withLock { state in
                state.deliveries.append(delivery)
                if keep {
                    for id in delivery.ids where state.seen.insert(id).inserted { state.unique.append(id) }
                }
            }
            switch action {
            case .answer(let status), .answerAfter(let status, _):
                if case .answerAfter(_, let seconds) = action { usleep(UInt32(seconds * 1_000_000)) }
                let head = Array("HTTP/1.1 \(status) Status\r\nContent-Length: 0\r\n\r\n".utf8)
                guard Self.writeAll(connection, head) else { return }
            case .hang(let seconds):
                usleep(UInt32(seconds * 1_000_000))
                return
            case .close:
                return
            }
        }
    }

    /// Verifies the request against every secret.
    private func check(headers: [String: String], body: [UInt8]) -> Delivery {
        let id = headers["webhook-id"] ?? ""
        let timestamp = headers["webhook-timestamp"] ?? ""
        let presented = (headers["webhook-signature"] ?? "").split(separator: " ").map(String.init)
        let content = Array("\(id).\(timestamp).".utf8) + body
        let valid =
            !secrets.isEmpty && !id.isEmpty && !timestamp.isEmpty
            && secrets.allSatisfy { secret in presented.contains("v1," + Data(Self.hmac(secret, content)).base64EncodedString()) }
        let events = (try? JSON(parsing: body))?.array ?? []
        return Delivery(
            webhookID: id, timestamp: timestamp, signatureValid: valid, signatures: presented.count,
            contentType: headers["content-type"] ?? "", ids: events.compactMap { $0["id"]?.string }, events: events, action: "",
            arrived: Date())
    }

    static func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = key.withUnsafeBytes { key in
            data.withUnsafeBytes { data in navd_hmac_sha256(key.baseAddress, key.count, data.baseAddress, data.count, &digest) }
        }
        return digest
    }

    /// Reads one request (head and `Content-Length` body) off `connection`; nil at its end.
    private static func readRequest(_ connection: Int32, _ buffer: inout [UInt8]) -> (headers: [String: String], body: [UInt8])? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while true {
            if let range = buffer.firstRange(of: separator) {
                headEnd = range.upperBound
                break
            }
            guard read(connection, &buffer) else { return nil }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        var headers: [String: String] = [:]
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < headEnd + length {
            guard read(connection, &buffer) else { return nil }
        }
        let body = Array(buffer[headEnd..<(headEnd + length)])
        buffer.removeFirst(headEnd + length)
        return (headers, body)
    }

    private static func read(_ connection: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = Glibc.read(connection, &chunk, chunk.count)
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    private static func writeAll(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(connection, $0.baseAddress, $0.count) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
