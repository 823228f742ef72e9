import CMicroHTTPD
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Answers the requests an ``HTTPServer`` has read.
///
/// Both methods are called synchronously on libmicrohttpd's pool threads,
/// possibly on several threads at once; they must not block for long, since a
/// blocked call holds up every connection of its pool thread.
protocol HTTPHandler: Sendable {
    /// Answers a fully read request.
    func handle(_ request: consuming HTTPRequest) -> HTTPResponse

    /// Answers a request whose body is larger than `limit` bytes, either by its
    /// `Content-Length` or while a chunked body was streaming in.
    ///
    /// - Parameters:
    ///   - request: the request with an empty body.
    ///   - limit: the configured `maxBody`.
    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
}

/// Why ``HTTPServer/start()`` failed.
enum HTTPServerError: Error, Hashable, CustomStringConvertible {
    /// `host` is neither an IPv4 address in dotted form nor `localhost`.
    case invalidHost(String)
    /// `start()` was called on a server that is already running.
    case alreadyRunning
    /// A libmicrohttpd call failed (`MHD_start_daemon` returning NULL: port in
    /// use, no permission, bad options); `reason` is what MHD logged, if anything.
    case startFailed(function: String, address: String, reason: String)

    var description: String {
        switch self {
        case .invalidHost(let host):
            "invalid listen host \"\(host)\": expected an IPv4 address or localhost"
        case .alreadyRunning:
            "the HTTP server is already running"
        case .startFailed(let function, let address, let reason):
            "\(function) failed to listen on \(address): \(reason)"
        }
    }
}

/// An HTTP/1.1 server on libmicrohttpd that owns one MHD daemon.
///
/// MHD runs an internal thread pool polling with `poll()` (epoll stalls
/// connections in this MHD version). Requests are read completely, then handed
/// to the ``HTTPHandler`` on the pool thread. Keep-alive works because a
/// response is queued on the last access-handler call of a request, never on
/// the first, except for a `Content-Length` over `maxBody`: that answer is
/// meant to close the connection without reading the body.
///
/// Thread safety: `HTTPServer` is `Sendable` because its only mutable state,
/// the running daemon, sits in a `Mutex`; the daemon handle is taken out of the
/// mutex by exactly one `stop()` before it is quiesced and stopped, so MHD
/// never sees two stops. The C callbacks reach only the immutable, `Sendable`
/// ``ServerContext`` and the per-request state, which MHD hands to one thread
/// at a time.
final class HTTPServer: Sendable {
    /// What the server listens on and how much it accepts.
    struct Configuration: Sendable {
        /// An IPv4 address in dotted form, `0.0.0.0` for every interface, or
        /// `localhost` (127.0.0.1).
        var host: String = "127.0.0.1"
        /// The TCP port; 0 picks a free one (see ``HTTPServer/boundPort``).
        var port: UInt16 = 8080
        /// Threads in MHD's pool, each polling its share of the connections.
        var threads: Int
        /// The largest request body accepted, in bytes; larger ones get
        /// ``HTTPHandler/bodyTooLarge(_:limit:)``.
        var maxBody: Int = 65536
        /// Concurrent connections accepted before new ones are refused.
        var connectionLimit: Int = 1024
        /// Seconds of inactivity after which a connection is closed.
        var connectionTimeout: Int = 30
        /// Bytes of each connection's buffer pool (request line, headers, read buffer). MHD zeroes
        /// the pool between requests, so a smaller pool is cheaper per request; headers larger than
        /// about half of it get 431.
        var connectionMemory: Int = 16384
        /// Seconds `stop()` waits for requests in progress to be answered.
        var shutdownGracePeriod: Int = 10
    }

    let configuration: Configuration
    private let handler: any HTTPHandler
    private let logger: Logger
    private let state = Mutex<State>(State())

    private struct State: Sendable {
        var running: Running?
        var boundPort: UInt16 = 0
    }

    /// A started daemon and the context its callbacks use.
    ///
    /// `@unchecked Sendable`: the daemon pointer is used only by `start()` and
    /// by the one `stop()` that removes this value from the server's mutex.
    private struct Running: @unchecked Sendable {
        let daemon: OpaquePointer
        /// Retained while the daemon runs; released after `MHD_stop_daemon`.
        let context: Unmanaged<ServerContext>
    }

    /// Creates a server; nothing listens until ``start()``.
    init(configuration: Configuration, handler: any HTTPHandler, logger: Logger) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
    }

    deinit {
        stop()
    }

    /// The port the server listens on: the one the kernel picked when
    /// `configuration.port` is 0. It is 0 before the first ``start()`` and
    /// keeps its value after ``stop()``.
    var boundPort: UInt16 {
        state.withLock { $0.boundPort }
    }

    /// Starts listening and serving on MHD's thread pool.
    ///
    /// - Throws: ``HTTPServerError/invalidHost(_:)`` for a host that is not
    ///   IPv4, ``HTTPServerError/alreadyRunning``, or
    ///   ``HTTPServerError/startFailed(function:address:reason:)`` when
    ///   `MHD_start_daemon` fails (for example because the port is in use).
    func start() throws(HTTPServerError) {
        var address = try Self.socketAddress(host: configuration.host, port: configuration.port)
        let context = ServerContext(
            handler: handler,
            logger: logger,
            maxBody: max(0, configuration.maxBody)
        )
        let retained = Unmanaged.passRetained(context)
        let contextPointer = retained.toOpaque()

        let result: Result<Void, HTTPServerError> = state.withLock { state in
            guard state.running == nil else {
                return .failure(.alreadyRunning)
            }
            let daemon = withUnsafeMutablePointer(to: &address) { addressPointer in
                var options: [MHD_OptionItem] = [
                    // The logger first, so that start-up messages reach it too.
                    navd_mhd_option_logger(mhdLog, contextPointer),
                    navd_mhd_option_keep_escapes(),
                    MHD_OptionItem(option: .SOCK_ADDR, value: 0, ptr_value: UnsafeMutableRawPointer(addressPointer)),
                    MHD_OptionItem(option: .THREAD_POOL_SIZE, value: max(1, configuration.threads), ptr_value: nil),
                    MHD_OptionItem(option: .CONNECTION_LIMIT, value: max(1, configuration.connectionLimit), ptr_value: nil),
                    MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(0, configuration.connectionTimeout), ptr_value: nil),
                    MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: max(4096, configuration.connectionMemory), ptr_value: nil),
                    MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
                ]
                return options.withUnsafeMutableBufferPointer { buffer in
                    navd_mhd_start(
                        Self.daemonFlags,
                        configuration.port,
                        accessHandler,
                        contextPointer,
                        requestCompleted,
                        contextPointer,
                        buffer.baseAddress
                    )
                }
            }
            guard let daemon else {
                return .failure(.startFailed(
                    function: "MHD_start_daemon",
                    address: "\(configuration.host):\(configuration.port)",
                    reason: context.startupReason()
                ))
            }
            for message in context.finishStartup() {
                logger.notice("libmicrohttpd: \(message)")
            }
            state.running = Running(daemon: daemon, context: retained)
            state.boundPort = navd_mhd_bind_port(daemon)
            return .success(())
        }

        switch result {
        case .success:
            logger.info("HTTP server listening", metadata: [
                "host": "\(configuration.host)",
                "port": "\(boundPort)",
                "threads": "\(max(1, configuration.threads))",
            ])
        case .failure(let error):
            retained.release()
            throw error
        }
    }

    /// Stops the server gracefully; does nothing when it is not running.
    ///
    /// Stops accepting (`MHD_quiesce_daemon`), answers requests already in
    /// progress for up to `shutdownGracePeriod` seconds (their responses carry
    /// `Connection: close`), then stops the daemon (`MHD_stop_daemon`), which
    /// closes idle keep-alive connections and joins the pool threads. Must not
    /// be called from a handler: MHD cannot join the thread it runs on.
    func stop() {
        guard let running = state.withLock({ state -> Running? in
            defer { state.running = nil }
            return state.running
        }) else {
            return
        }
        let context = running.context.takeUnretainedValue()
        context.draining.store(true, ordering: .relaxed)
        let listenSocket = MHD_quiesce_daemon(running.daemon)

        let deadline = ContinuousClock.now.advanced(by: .seconds(max(0, configuration.shutdownGracePeriod)))
        while context.inFlight.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline {
            usleep(2_000)
        }
        let unanswered = context.inFlight.load(ordering: .acquiring)

        MHD_stop_daemon(running.daemon)
        // MHD hands the listening socket back on quiesce; it may be closed
        // only after MHD_stop_daemon, when no pool thread can still use it.
        if listenSocket != navd_mhd_invalid_socket {
            close(listenSocket)
        }
        running.context.release()
        if unanswered > 0 {
            logger.warning("HTTP server stopped with requests in progress", metadata: ["requests": "\(unanswered)"])
        } else {
            logger.info("HTTP server stopped")
        }
    }

    /// Internal polling thread with `poll()` (not epoll: it stalls connections
    /// in MHD 0.9.75), an inter-thread channel so that `MHD_quiesce_daemon`
    /// works with a thread pool, and error messages routed to the logger.
    private static let daemonFlags: UInt32 =
        MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        | MHD_USE_POLL.rawValue
        | MHD_USE_ITC.rawValue
        | MHD_USE_ERROR_LOG.rawValue

    /// The IPv4 socket address for `host` and `port` (`inet_pton`).
    private static func socketAddress(host: String, port: UInt16) throws(HTTPServerError) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        let dotted = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, dotted, &address.sin_addr) == 1 else {
            throw .invalidHost(host)
        }
        return address
    }
}

// MARK: - State shared with the C callbacks

/// What the C callbacks of one running daemon share: immutable apart from
/// atomics and a mutex, so any pool thread may use it.
private final class ServerContext: Sendable {
    let handler: any HTTPHandler
    let logger: Logger
    let maxBody: Int
    /// Requests between their first access-handler call and their
    /// request-completed callback.
    let inFlight = Atomic<Int>(0)
    /// Set by `stop()`: responses from now on close their connection.
    let draining = Atomic<Bool>(false)
    /// MHD's messages while `MHD_start_daemon` runs, for the error it may throw;
    /// nil once the daemon has started.
    private let startupMessages = Mutex<[String]?>([])

    init(handler: any HTTPHandler, logger: Logger, maxBody: Int) {
        self.handler = handler
        self.logger = logger
        self.maxBody = maxBody
    }

    /// Keeps a start-up message for the error; false once the daemon runs.
    func recordStartupMessage(_ message: String) -> Bool {
        startupMessages.withLock { messages in
            guard messages != nil else { return false }
            messages?.append(message)
            return true
        }
    }

    /// Ends start-up: from now on MHD's messages are logged as they come.
    /// - Returns: what MHD said while starting (warnings, since it started).
    func finishStartup() -> [String] {
        startupMessages.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }

    func startupReason() -> String {
        let messages = startupMessages.withLock { $0 ?? [] }
        return messages.isEmpty ? "MHD gave no reason" : messages.joined(separator: "; ")
    }
}

/// One request being read: created on the first access-handler call, kept in
/// MHD's per-request pointer (`*con_cls`) and released when MHD reports the
/// request completed. MHD drives a connection from one thread at a time.
private final class PendingRequest {
    var request: HTTPRequest
    /// The body size the client announced, when it announced one.
    let contentLength: Int?
    /// Body bytes received past `maxBody` (counting what was kept before):
    /// nonzero once the body is known to be too large and is being discarded.
    var discarded = 0
    /// A response has been queued; anything still uploaded is ignored.
    var answered = false

    init(request: HTTPRequest, contentLength: Int?) {
        self.request = request
        self.contentLength = contentLength
    }
}

/// How many bytes of a too-large chunked body are read and thrown away, so
/// that its client still gets the 413, before the connection is dropped.
private let discardAllowance = 1 << 20

// MARK: - C callbacks
//
// Top-level functions, so they are nonisolated and capture nothing: MHD calls
// them on its own threads.

/// `MHD_AccessHandlerCallback`: called once when a request's headers are in,
/// then once per chunk of body, then once with `*upload_data_size == 0`.
///
/// MHD 0.9.75 accepts `MHD_queue_response` only on the first call (and then
/// closes the connection after the response, reading no body) or on the last
/// one; a response queued while the body streams in is refused.
private func accessHandler(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let requestState else {
        return .NO  // MHD always passes these; nothing sensible to answer otherwise
    }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    guard let existing = requestState.pointee else {
        let pending = makePendingRequest(connection: connection, url: url, method: method)
        requestState.pointee = Unmanaged.passRetained(pending).toOpaque()
        context.inFlight.add(1, ordering: .relaxed)
        if let declared = pending.contentLength, declared > context.maxBody {
            // The one answer queued on the first call: MHD then reads none of
            // the body and closes the connection after the response, which is
            // what a body that will not be read needs.
            return answerTooLarge(pending, context: context, connection: connection)
        }
        // Otherwise only set up the request: a response queued now would make
        // MHD close the connection after it (no keep-alive).
        return .YES
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()

    let size = uploadDataSize.pointee
    uploadDataSize.pointee = 0  // every byte handed over is consumed, kept or not
    if pending.answered {
        return .YES
    }
    if size > 0 {
        if pending.discarded > 0 {
            pending.discarded += size
            guard pending.discarded <= context.maxBody + discardAllowance else {
                context.logger.info(
                    "dropping a connection whose chunked body goes on far past the limit",
                    metadata: ["limit": "\(context.maxBody)", "received": "\(pending.discarded)"]
                )
                return .NO
            }
            return .YES
        }
        guard pending.request.body.count + size <= context.maxBody else {
            // Too large, as a chunked body or one longer than it announced: MHD
            // will not take a response before the body has ended, so read the
            // rest, keep none of it, and answer then.
            pending.discarded = pending.request.body.count + size
            pending.request.body = []
            return .YES
        }
        if let uploadData {
            pending.request.body.append(
                contentsOf: UnsafeRawBufferPointer(start: UnsafeRawPointer(uploadData), count: size)
            )
        }
        return .YES
    }
    if pending.discarded > 0 {
        return answerTooLarge(pending, context: context, connection: connection)
    }
    pending.answered = true
    // Moved out, not copied: once answered, nothing reads the pending request again.
    var request = HTTPRequest(method: "", path: "")
    swap(&request, &pending.request)
    let response = context.handler.handle(consume request)
    return queue(response, on: connection, context: context)
}

/// Queues the handler's answer to a body over `maxBody`, the body left out.
private func answerTooLarge(
    _ pending: PendingRequest,
    context: ServerContext,
    connection: OpaquePointer
) -> MHD_Result {
    pending.answered = true
    pending.request.body = []
    let response = context.handler.bodyTooLarge(pending.request, limit: context.maxBody)
    return queue(response, on: connection, context: context)
}

/// `MHD_RequestCompletedCallback`: releases the request's state, whether it was
/// answered, timed out, or its client went away.
private func requestCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    guard let requestState, let existing = requestState.pointee else {
        return
    }
    requestState.pointee = nil
    Unmanaged<PendingRequest>.fromOpaque(existing).release()
    if let cls {
        Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
            .inFlight.subtract(1, ordering: .releasing)
    }
}

/// `MHD_LogCallback`: MHD's error messages, formatted and sent to the logger.
private func mhdLog(
    _ cls: UnsafeMutableRawPointer?,
    _ format: UnsafePointer<CChar>?,
    _ arguments: CVaListPointer?
) {
    guard let cls, let format, let arguments else {
        return
    }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    var buffer = [CChar](repeating: 0, count: 1024)
    let written = buffer.withUnsafeMutableBufferPointer { buffer in
        vsnprintf(buffer.baseAddress, buffer.count, format, arguments)
    }
    guard written > 0 else {
        return
    }
    let length = min(Int(written), buffer.count - 1)
    var message = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    while let last = message.last, last.isWhitespace {
        message.removeLast()
    }
    if context.recordStartupMessage(message) {
        return
    }
    // Most of what MHD reports once running is caused by clients (bad
    // requests, resets); resource exhaustion is what an operator must see.
    let serious = ["limit", "thread", "accept", "memory", "allocate"].contains {
        message.lowercased().contains($0)
    }
    context.logger.log(level: serious ? .warning : .debug, "libmicrohttpd: \(message)")
}

// MARK: - Building requests, queueing responses

private func makePendingRequest(
    connection: OpaquePointer,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?
) -> PendingRequest {
    var values = ConnectionValues()
    withUnsafeMutablePointer(to: &values) { pointer in
        _ = MHD_get_connection_values_n(connection, navd_mhd_headers_and_arguments, collectValue, UnsafeMutableRawPointer(pointer))
    }
    let request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: values.query,
        headers: values.headers,
        body: []
    )
    let contentLength = values.headers["content-length"].flatMap { Int($0) }
    return PendingRequest(request: request, contentLength: contentLength)
}

/// What ``collectValue(_:_:_:_:_:_:)`` gathers from one request's header fields and query.
private struct ConnectionValues {
    /// Most clients send fewer than eight fields: one allocation, no regrowth.
    var headers = HTTPHeaders(reservingCapacity: 8)
    var query: [String: String] = [:]
}

/// `MHD_KeyValueIteratorN` adding a header field or query argument to the
/// ``ConnectionValues`` at `cls`. Header names are lowercased as they are copied;
/// a query key without `=` has the empty string as its value.
private func collectValue(
    _ cls: UnsafeMutableRawPointer?,
    _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?,
    _ keySize: Int,
    _ value: UnsafePointer<CChar>?,
    _ valueSize: Int
) -> MHD_Result {
    guard let cls, let key else {
        return .YES
    }
    let values = cls.assumingMemoryBound(to: ConnectionValues.self)
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
    let name = UnsafeRawBufferPointer(start: key, count: keySize)
    if kind == .HEADER_KIND {
        values.pointee.headers.add(name: name, text)
    } else {
        values.pointee.query[percentDecoded(String(decoding: name, as: UTF8.self))] = percentDecoded(text)
    }
    return .YES
}

/// Decodes `%XX` escapes (MHD has already turned `+` into spaces); a `%` not
/// followed by two hex digits stays as it is, invalid UTF-8 is repaired.
private func percentDecoded(_ text: String) -> String {
    guard text.utf8.contains(UInt8(ascii: "%")) else {
        return text
    }
    let bytes = Array(text.utf8)
    var decoded: [UInt8] = []
    decoded.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
        if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
           let high = Hex.value(bytes[index + 1]), let low = Hex.value(bytes[index + 2]) {
            decoded.append(high << 4 | low)
            index += 3
        } else {
            decoded.append(bytes[index])
            index += 1
        }
    }
    return String(decoding: decoded, as: UTF8.self)
}

/// Queues `response` on `connection` (`MHD_queue_response`), copying its body.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: ServerContext) -> MHD_Result {
    var status = response.status
    if !(100...599).contains(status) {
        context.logger.error("handler answered an invalid HTTP status; sending 500", metadata: ["status": "\(status)"])
        status = 500
    }
    let mhdResponse = response.body.withUnsafeBytes { body in
        navd_mhd_response_copy(body.count, body.baseAddress)
    }
    guard let mhdResponse else {
        context.logger.error("MHD_create_response_from_buffer_with_free_callback failed; dropping the connection")
        return .NO
    }
    defer { MHD_destroy_response(mhdResponse) }

    for (name, value) in response.headers {
        // `withCString` lends a native string's own NUL-terminated storage: no C string copies.
        let added = name.withCString { name in value.withCString { value in MHD_add_response_header(mhdResponse, name, value) } }
        if added != .YES {
            context.logger.debug("MHD_add_response_header refused a header", metadata: ["header": "\(name)"])
        }
    }
    if context.draining.load(ordering: .relaxed),
       !response.headers.contains(where: { $0.0.lowercased() == "connection" }) {
        _ = MHD_add_response_header(mhdResponse, "Connection", "close")
    }
    let queued = MHD_queue_response(connection, UInt32(status), mhdResponse)
    if queued != .YES {
        context.logger.error("MHD_queue_response failed; dropping the connection", metadata: ["status": "\(status)"])
    }
    return queued
}
