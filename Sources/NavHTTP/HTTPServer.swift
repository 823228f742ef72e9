import NavJSON
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
package protocol HTTPHandler: Sendable {
    /// Answers a fully read request.
    func handle(_ request: consuming HTTPRequest) -> HTTPResponse

    /// Answers a request refused before it reached ``handle(_:)``: its request line or a header
    /// holds a NUL byte, which libmicrohttpd would have read as the end of that text. The answer
    /// closes the connection, the body unread.
    ///
    /// - Parameters:
    ///   - request: the request as far as it could be read, with an empty body.
    ///   - reason: what is wrong with it, for the client.
    func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse

    /// Answers a request whose body is larger than `limit` bytes, either by its
    /// `Content-Length` or while a chunked body was streaming in.
    ///
    /// - Parameters:
    ///   - request: the request with an empty body.
    ///   - limit: the configured `maxBody`.
    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse
}

/// Why ``HTTPServer/start()`` failed.
package enum HTTPServerError: Error, Hashable, CustomStringConvertible {
    /// `host` is neither an IPv4 address in dotted form nor `localhost`.
    case invalidHost(String)
    /// `start()` was called on a server that is already running.
    case alreadyRunning
    /// A libmicrohttpd call failed (`MHD_start_daemon` returning NULL: port in
    /// use, no permission, bad options); `reason` is what MHD logged, if anything.
    case startFailed(function: String, address: String, reason: String)

    package var description: String {
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
package final class HTTPServer: Sendable {
    /// What the server listens on and how much it accepts.
    package struct Configuration: Sendable {
        /// An IPv4 address in dotted form, `0.0.0.0` for every interface, or
        /// `localhost` (127.0.0.1).
        package var host: String = "127.0.0.1"
        /// The TCP port; 0 picks a free one (see ``HTTPServer/boundPort``).
        package var port: UInt16 = 8080
        /// Threads in MHD's pool, each polling its share of the connections.
        package var threads: Int
        /// The largest request body accepted, in bytes; larger ones get
        /// ``HTTPHandler/bodyTooLarge(_:limit:)``.
        package var maxBody: Int = 65536
        /// Concurrent connections accepted before new ones are refused.
        package var connectionLimit: Int = 1024
        /// Seconds of inactivity after which a connection is closed.
        package var connectionTimeout: Int = 30
        /// Seconds a request has to arrive whole, headers and body, however steadily its bytes
        /// trickle in (each byte resets `connectionTimeout`); 0 for no limit. See ``RequestDeadlines``.
        package var headerTimeout: Int = 0
        /// Bytes of each connection's buffer pool (request line, headers, read buffer). MHD zeroes
        /// the pool between requests, so a smaller pool is cheaper per request; headers larger than
        /// about half of it get 431.
        package var connectionMemory: Int = 16384
        /// Seconds `stop()` waits for requests in progress to be answered.
        package var shutdownGracePeriod: Int = 10

        package init(host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int, maxBody: Int = 65536, connectionLimit: Int = 1024, connectionTimeout: Int = 30, headerTimeout: Int = 0, connectionMemory: Int = 16384, shutdownGracePeriod: Int = 10) {
            self.host = host
            self.port = port
            self.threads = threads
            self.maxBody = maxBody
            self.connectionLimit = connectionLimit
            self.connectionTimeout = connectionTimeout
            self.headerTimeout = headerTimeout
            self.connectionMemory = connectionMemory
            self.shutdownGracePeriod = shutdownGracePeriod
        }
    }

    package let configuration: Configuration
    private let handler: any HTTPHandler
    private let logger: Logger
    private let state = Mutex<State>(State())

    private struct State: Sendable {
        package var running: Running?
        package var boundPort: UInt16 = 0
    }

    /// A started daemon and the context its callbacks use.
    ///
    /// `@unchecked Sendable`: the daemon pointer is used only by `start()` and
    /// by the one `stop()` that removes this value from the server's mutex.
    private struct Running: @unchecked Sendable {
        package let daemon: OpaquePointer
        /// Retained while the daemon runs; released after `MHD_stop_daemon`.
        package let context: Unmanaged<ServerContext>
    }

    /// Creates a server; nothing listens until ``start()``.
    package init(configuration: Configuration, handler: any HTTPHandler, logger: Logger) {
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
    package var boundPort: UInt16 {
        state.withLock { $0.boundPort }
    }

    /// Starts listening and serving on MHD's thread pool.
    ///
    /// - Throws: ``HTTPServerError/invalidHost(_:)`` for a host that is not
    ///   IPv4, ``HTTPServerError/alreadyRunning``, or
    ///   ``HTTPServerError/startFailed(function:address:reason:)`` when
    ///   `MHD_start_daemon` fails (for example because the port is in use).
    package func start() throws(HTTPServerError) {
        var address = try Self.socketAddress(host: configuration.host, port: configuration.port)
        let context = ServerContext(
            handler: handler,
            logger: logger,
            maxBody: max(0, configuration.maxBody),
            deadlines: configuration.headerTimeout > 0 ? RequestDeadlines(seconds: configuration.headerTimeout, logger: logger) : nil
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
                    // Measures the request line before MHD cuts it up (see `uriLogged`).
                    navd_mhd_option_uri_log(uriLogged, contextPointer),
                    // Tracks each connection for the request deadline (see `RequestDeadlines`).
                    navd_mhd_option_notify_connection(connectionNotified, contextPointer),
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
            context.deadlines?.start()
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
    package func stop() {
        guard let running = state.withLock({ state -> Running? in
            defer { state.running = nil }
            return state.running
        }) else {
            return
        }
        let context = running.context.takeUnretainedValue()
        context.draining.store(true, ordering: .relaxed)
        let listenSocket = MHD_quiesce_daemon(running.daemon)
        // Streams end with what they have written; none stays suspended (MHD cannot stop
        // with a connection suspended) and each is then waited for like any request.
        for stream in context.openStreams() { stream.finish() }

        let deadline = ContinuousClock.now.advanced(by: .seconds(max(0, configuration.shutdownGracePeriod)))
        while context.inFlight.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline {
            usleep(2_000)
        }
        let unanswered = context.inFlight.load(ordering: .acquiring)

        MHD_stop_daemon(running.daemon)
        // Every connection is closed (and unregistered) by now.
        context.deadlines?.stop()
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
    /// works with a thread pool (and a resumed connection is served at once), error
    /// messages routed to the logger, and connections that may be suspended while a
    /// ``ResponseStream`` has nothing to send.
    private static let daemonFlags: UInt32 =
        MHD_USE_INTERNAL_POLLING_THREAD.rawValue
        | MHD_USE_POLL.rawValue
        | MHD_USE_ITC.rawValue
        | MHD_USE_ERROR_LOG.rawValue
        | MHD_ALLOW_SUSPEND_RESUME.rawValue

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
    package let handler: any HTTPHandler
    package let logger: Logger
    package let maxBody: Int
    /// The request deadline's watchdog, when `headerTimeout` is set.
    package let deadlines: RequestDeadlines?
    /// Requests between their first access-handler call and their
    /// request-completed callback.
    package let inFlight = Atomic<Int>(0)
    /// Set by `stop()`: responses from now on close their connection.
    package let draining = Atomic<Bool>(false)
    /// The streams being sent, so that `stop()` can end them.
    private let streams = Mutex<[ObjectIdentifier: ResponseStream]>([:])

    package func opened(_ stream: ResponseStream) {
        streams.withLock { $0[ObjectIdentifier(stream)] = stream }
    }

    package func closed(_ stream: ResponseStream) {
        _ = streams.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    package func openStreams() -> [ResponseStream] {
        streams.withLock { Array($0.values) }
    }
    /// MHD's messages while `MHD_start_daemon` runs, for the error it may throw;
    /// nil once the daemon has started.
    private let startupMessages = Mutex<[String]?>([])

    package init(handler: any HTTPHandler, logger: Logger, maxBody: Int, deadlines: RequestDeadlines?) {
        self.handler = handler
        self.logger = logger
        self.maxBody = maxBody
        self.deadlines = deadlines
    }

    /// Keeps a start-up message for the error; false once the daemon runs.
    package func recordStartupMessage(_ message: String) -> Bool {
        startupMessages.withLock { messages in
            guard messages != nil else { return false }
            messages?.append(message)
            return true
        }
    }

    /// Ends start-up: from now on MHD's messages are logged as they come.
    /// - Returns: what MHD said while starting (warnings, since it started).
    package func finishStartup() -> [String] {
        startupMessages.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
    }

    package func startupReason() -> String {
        let messages = startupMessages.withLock { $0 ?? [] }
        return messages.isEmpty ? "MHD gave no reason" : messages.joined(separator: "; ")
    }
}

/// One request being read: created when its request line is parsed (the URI log
/// callback, whose result MHD keeps as the request's `*con_cls`), filled in on the
/// first access-handler call, and released when MHD reports the request completed.
/// MHD drives a connection from one thread at a time.
private final class PendingRequest {
    package var request = HTTPRequest(method: "", path: "")
    /// The body size the client announced, when it announced one.
    package var contentLength: Int?
    /// Bytes of the URI, query included, up to its first NUL, measured before MHD cut it up;
    /// -1 when MHD passed none.
    package let uriLength: Int
    /// The access handler has seen the request (and counted it in `inFlight`).
    package var started = false
    /// Body bytes received past `maxBody` (counting what was kept before):
    /// nonzero once the body is known to be too large and is being discarded.
    package var discarded = 0
    /// A response has been queued; anything still uploaded is ignored.
    package var answered = false

    package init(uriLength: Int) {
        self.uriLength = uriLength
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

    let existing: UnsafeMutableRawPointer
    if let made = requestState.pointee {
        existing = made
    } else {
        // `uriLogged` makes it for every request; this is only a fallback.
        existing = Unmanaged.passRetained(PendingRequest(uriLength: -1)).toOpaque()
        requestState.pointee = existing
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()

    if !pending.started {
        pending.started = true
        context.inFlight.add(1, ordering: .relaxed)
        let clean = read(pending, connection: connection, url: url, method: method, version: version)
        if !clean {
            // Queued on the first call: MHD closes the connection after it, reading no body.
            pending.answered = true
            stopDeadline(connection, context: context)
            let response = context.handler.malformed(pending.request, reason: "the request line or a header contains a NUL byte")
            return queue(response, on: connection, context: context)
        }
        if let declared = pending.contentLength, declared > context.maxBody {
            // Queued on the first call, like the answer above: MHD then reads
            // none of the body and closes the connection after the response,
            // which is what a body that will not be read needs.
            return answerTooLarge(pending, context: context, connection: connection)
        }
        // Otherwise only set up the request: a response queued now would make
        // MHD close the connection after it (no keep-alive).
        return .YES
    }

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
    stopDeadline(connection, context: context)
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
    stopDeadline(connection, context: context)
    pending.request.body = []
    let response = context.handler.bodyTooLarge(pending.request, limit: context.maxBody)
    return queue(response, on: connection, context: context)
}

/// The request is in (or will be read no further): it is answered however long the handler
/// takes, out of reach of the request deadline.
@inline(__always)
private func stopDeadline(_ connection: OpaquePointer, context: ServerContext) {
    if context.deadlines != nil {
        RequestDeadlines.tracked(connection)?.answering()
    }
}

/// `MHD_RequestCompletedCallback`: releases the request's state, whether it was
/// answered, timed out, or its client went away.
private func requestCompleted(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestState: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    // The answer is out: the connection's next request is awaited from now on.
    if let connection, let cls, Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines != nil {
        RequestDeadlines.tracked(connection)?.awaitRequest()
    }
    guard let requestState, let existing = requestState.pointee else {
        return
    }
    requestState.pointee = nil
    let pending = Unmanaged<PendingRequest>.fromOpaque(existing)
    // A request MHD refused before the access handler saw it was never counted.
    if pending.takeUnretainedValue().started, let cls {
        Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
            .inFlight.subtract(1, ordering: .releasing)
    }
    pending.release()
}

/// The URI log callback (`MHD_OPTION_URI_LOG_CALLBACK`): called once the request line is
/// parsed, while the URI is still whole (MHD has only ended it where the HTTP version
/// begins), so its length up to a first NUL is the length of the URI exactly when it holds
/// no NUL. Its result is the request's `*con_cls`; ``requestCompleted`` releases it.
private func uriLogged(
    _ cls: UnsafeMutableRawPointer?,
    _ uri: UnsafePointer<CChar>?,
    _ connection: OpaquePointer?
) -> UnsafeMutableRawPointer? {
    let pending = PendingRequest(uriLength: uri.map { strlen($0) } ?? -1)
    return Unmanaged.passRetained(pending).toOpaque()
}

/// `MHD_NotifyConnectionCallback`: registers each connection with the request deadline's
/// watchdog when MHD has accepted it, and unregisters it when MHD has closed it. MHD calls
/// this on the connection's own pool thread, and calls `CLOSED` before it closes the socket
/// (`MHD_cleanup_connections`, daemon.c), so a registered socket is always still open.
private func connectionNotified(
    _ cls: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext,
          let deadlines = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines else {
        return
    }
    if code == navd_mhd_connection_started {
        let socket = navd_mhd_connection_socket(connection)
        guard socket != navd_mhd_invalid_socket else { return }
        socketContext.pointee = deadlines.register(socket: socket)
    } else if code == navd_mhd_connection_closed, let tracked = socketContext.pointee {
        socketContext.pointee = nil
        deadlines.unregister(tracked)
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

/// Fills in `pending` from what MHD parsed.
///
/// - Returns: false when the request line or a header holds a NUL byte. MHD parses the head
///   in place, ending each piece with a NUL, and hands over C strings: a NUL the client sent
///   silently cuts the method, the URI or a header value short (`DELETE /s/{id}\0/screens/…`
///   reached `DELETE /s/{id}`). So the pieces are checked to lie exactly where MHD put them:
///   the URI's length as measured before MHD cut it up must reach the HTTP version, and each
///   header must start where the line before it ended (see ``HeadCheck``).
private func read(
    _ pending: PendingRequest,
    connection: OpaquePointer,
    url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?
) -> Bool {
    var values = ConnectionValues()
    let requestLineIsClean = HeadCheck.requestLine(method: method, url: url, version: version, uriLength: pending.uriLength)
    if requestLineIsClean, let version {
        // The request line ends right after the eight bytes of `HTTP/1.1`.
        values.check = HeadCheck(cursor: UnsafeRawPointer(version) + 8)
    }
    withUnsafeMutablePointer(to: &values) { pointer in
        _ = MHD_get_connection_values_n(connection, navd_mhd_headers_and_arguments, collectValue, UnsafeMutableRawPointer(pointer))
    }
    pending.request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "",
        path: url.map { String(cString: $0) } ?? "/",
        query: values.query,
        headers: values.headers,
        body: []
    )
    pending.contentLength = values.headers["content-length"].flatMap { Int($0) }
    guard requestLineIsClean, let method, let check = values.check else { return false }
    return check.endsHead(at: UnsafeRawPointer(method) + navd_mhd_request_header_size(connection))
}

/// What ``collectValue(_:_:_:_:_:_:)`` gathers from one request's header fields and query.
private struct ConnectionValues {
    /// Most clients send fewer than eight fields: one allocation, no regrowth.
    package var headers = HTTPHeaders(reservingCapacity: 8)
    package var query: [String: String] = [:]
    /// Follows the header lines through MHD's buffer; nil once one is found out of place.
    package var check: HeadCheck?
}

/// Checks that the request's head, as MHD left it in its read buffer, holds no NUL byte the
/// client sent (libmicrohttpd 0.9.75, `connection.c`).
///
/// MHD reads the head into one buffer and parses it in place: the space after the method, the
/// space before the version, each line end (CR and LF, or a bare LF) and each header's colon
/// become NULs, and the method, URI, header names and values it hands over are C strings into
/// that buffer, measured with `strlen`. So with no NUL from the client every piece lies exactly
/// where the one before it ended plus MHD's own NULs; a NUL from the client ends a piece early,
/// and the next piece is then not where it should be. Only pointers MHD handed over are
/// compared, and bytes are read only between two of them that are a few bytes apart, so a
/// piece MHD moved (a folded header line, which this check refuses too; RFC 9112 §5.2 allows
/// that) is never followed far. A NUL sent right before a bare LF is the one case left: it reads
/// exactly like the CR of a CRLF, and ends nothing early.
private struct HeadCheck {
    /// Where the current line's content ended: its line end starts here.
    package var cursor: UnsafeRawPointer

    /// The request line: the method ends at the NUL MHD wrote for the first space (any further
    /// spaces MHD skipped follow it), the URI starts there, and its length measured before MHD
    /// cut it up reaches the NUL MHD wrote for the space before the version.
    package static func requestLine(
        method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uriLength: Int
    ) -> Bool {
        guard let method, let url, let version, uriLength >= 0 else { return false }
        let methodStart = UnsafeRawPointer(method)
        let uriStart = UnsafeRawPointer(url)
        let versionStart = UnsafeRawPointer(version)
        guard methodStart < uriStart, uriStart < versionStart else { return false }
        var position = methodStart + strlen(method)
        guard position < uriStart, position.load(as: UInt8.self) == 0 else { return false }
        position += 1
        while position < uriStart {
            guard position.load(as: UInt8.self) == UInt8(ascii: " ") else { return false }
            position += 1
        }
        return uriStart + uriLength + 1 == versionStart
    }

    /// Whether a header line whose name starts at `name` (`nameSize` bytes) and whose value
    /// starts at `value` follows the line that ended at `cursor`; moves past its value if so.
    package mutating func follows(name: UnsafeRawPointer, nameSize: Int, value: UnsafeRawPointer, valueSize: Int) -> Bool {
        // One line end: CRLF (two NULs) or a bare LF (one).
        guard name > cursor, name - cursor <= 2 else { return false }
        var position = cursor
        while position < name {
            guard position.load(as: UInt8.self) == 0 else { return false }
            position += 1
        }
        // The name, then the NUL that was its colon, then the blanks MHD skipped.
        position = name + nameSize
        guard position < value, position.load(as: UInt8.self) == 0 else { return false }
        position += 1
        while position < value {
            let byte = position.load(as: UInt8.self)
            guard byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") else { return false }
            position += 1
        }
        cursor = value + valueSize
        return true
    }

    /// Whether the last line's end and the blank line (each CRLF or LF: two to four NULs) are
    /// all that lies between `cursor` and `end`, where MHD says the head ends.
    package func endsHead(at end: UnsafeRawPointer) -> Bool {
        guard end > cursor, end - cursor >= 2, end - cursor <= 4 else { return false }
        var position = cursor
        while position < end {
            guard position.load(as: UInt8.self) == 0 else { return false }
            position += 1
        }
        return true
    }
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
    let name = UnsafeRawBufferPointer(start: key, count: keySize)
    if kind == .HEADER_KIND {
        let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
        if values.pointee.check != nil, let value,
           values.pointee.check?.follows(name: UnsafeRawPointer(key), nameSize: keySize, value: UnsafeRawPointer(value), valueSize: valueSize) != true {
            values.pointee.check = nil
        }
        values.pointee.headers.add(name: name, text)
    } else {
        values.pointee.query[queryText(name)] = queryText(UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize))
    }
    return .YES
}

/// A query argument's name or value with its `%XX` escapes decoded (MHD has already turned `+`
/// into spaces): leniently, as forms are written: a `%` not followed by two hex digits stays as
/// it is, invalid UTF-8 is repaired.
private func queryText(_ bytes: UnsafeRawBufferPointer) -> String {
    PercentDecoding.decode(bytes.assumingMemoryBound(to: UInt8.self), strict: false) ?? ""
}

/// Queues `response` on `connection` (`MHD_queue_response`), copying its body.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, context: ServerContext) -> MHD_Result {
    var status = response.status
    if !(100...599).contains(status) {
        context.logger.error("handler answered an invalid HTTP status; sending 500", metadata: ["status": "\(status)"])
        status = 500
    }
    let mhdResponse: OpaquePointer?
    if let stream = response.stream {
        mhdResponse = streamResponse(stream, on: connection, context: context)
    } else {
        mhdResponse = response.body.withUnsafeBytes { body in
            navd_mhd_response_copy(body.count, body.baseAddress)
        }
    }
    guard let mhdResponse else {
        context.logger.error("creating the MHD response failed; dropping the connection")
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

// MARK: - Streamed responses

/// What a streamed response's callbacks need: the stream, and the server context that lists it.
private final class StreamBinding {
    let stream: ResponseStream
    let context: ServerContext

    init(stream: ResponseStream, context: ServerContext) {
        self.stream = stream
        self.context = context
    }
}

/// An MHD response of unknown size (sent chunked) that reads `stream`; the binding is retained
/// until MHD frees the response (``streamFreed``).
private func streamResponse(_ stream: ResponseStream, on connection: OpaquePointer, context: ServerContext) -> OpaquePointer? {
    let binding = Unmanaged.passRetained(StreamBinding(stream: stream, context: context))
    guard let response = MHD_create_response_from_callback(navd_mhd_size_unknown, 16 * 1024, streamRead, binding.toOpaque(), streamFreed) else {
        binding.release()
        return nil
    }
    stream.attach(to: connection)
    context.opened(stream)
    return response
}

/// `MHD_ContentReaderCallback`: the stream's next bytes; with none yet, the stream has
/// suspended the connection and 0 is returned (MHD calls again once a write resumes it).
private func streamRead(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int) -> Int {
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls).takeUnretainedValue()
    switch binding.stream.read(into: buffer, capacity: capacity) {
    case .bytes(let count): return count
    case .wait: return 0
    case .end: return -1  // MHD_CONTENT_READER_END_OF_STREAM
    case .failed: return -2  // MHD_CONTENT_READER_END_WITH_ERROR: the connection is closed
    }
}

/// `MHD_ContentReaderFreeCallback`: MHD is done with the response (sent, failed, or the client
/// went away): the stream is closed and forgotten.
private func streamFreed(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    let binding = Unmanaged<StreamBinding>.fromOpaque(cls)
    let bound = binding.takeUnretainedValue()
    bound.context.closed(bound.stream)
    bound.stream.detach()
    binding.release()
}
