import CMicroHTTPD
import Logging
import NavJSON
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
    /// holds a NUL byte, which libmicrohttpd would have read as the end of that text, or its
    /// framing is ambiguous (``FramingFault``: both `Content-Length` and `Transfer-Encoding`, a
    /// repeated `Content-Length`, `Host` or `Authorization`, no `Host` on HTTP/1.1, a header name
    /// that is not a token, a line ended by a bare LF, a CR inside a value, an absolute-form
    /// target whose authority is not `host[:port]`). The answer closes the connection, the body
    /// unread.
    ///
    /// - Parameters:
    ///   - request: the request as far as it could be read, with an empty body.
    ///   - reason: what is wrong with it, for the client.
    func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse

    /// Answers a request refused before it reached ``handle(_:)`` because its
    /// `Transfer-Encoding` names a coding other than `chunked`, which libmicrohttpd cannot
    /// decode (it would read such a body until the connection closes). The answer closes the
    /// connection, the body unread.
    ///
    /// - Parameters:
    ///   - request: the request as far as it could be read, with an empty body.
    ///   - coding: the first coding the server does not know, as sent (at most 64 characters).
    func unsupportedTransferCoding(_ request: HTTPRequest, coding: String) -> HTTPResponse

    /// Answers a request whose body is larger than `limit` bytes, either by its
    /// `Content-Length` or while a chunked body was streaming in.
    ///
    /// - Parameters:
    ///   - request: the request with an empty body.
    ///   - limit: the request's limit (``bodyLimit(for:configured:)``).
    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse

    /// The most body bytes `request` may send, from its method and target (its body not read
    /// yet): `configured`, the server's `maxBody`, unless a route takes what another answer gave
    /// and so may need more.
    func bodyLimit(for request: HTTPRequest, configured: Int) -> Int
}

extension HTTPHandler {
    package func bodyLimit(for request: HTTPRequest, configured: Int) -> Int { configured }
}

/// Why ``HTTPServer/start()`` failed.
package enum HTTPServerError: Error, Hashable, CustomStringConvertible {
    /// `host` is neither an IPv4 or IPv6 address nor a name that resolves to one (or a listen
    /// address is not `HOST:PORT`).
    case invalidHost(String)
    /// `start()` was called on a server that is already running.
    case alreadyRunning
    /// A libmicrohttpd call failed (`MHD_start_daemon` returning NULL: port in
    /// use, no permission, bad options); `reason` is what MHD logged, if anything.
    case startFailed(function: String, address: String, reason: String)

    package var description: String {
        switch self {
        case .invalidHost(let host):
            "invalid listen address \"\(host)\": expected HOST:PORT, :PORT or [IPV6]:PORT, with an IPv4 or IPv6 address or a name that resolves"
        case .alreadyRunning:
            "the HTTP server is already running"
        case .startFailed(let function, let address, let reason):
            "\(function) failed to listen on \(address): \(reason)"
        }
    }
}

/// An HTTP/1.1 server on libmicrohttpd that owns one MHD daemon.
///
/// MHD runs an internal thread pool polling with `poll()` (see ``Polling`` for the
/// alternatives measured). Requests are read completely, then handed
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
        /// An IPv4 or IPv6 address (`0.0.0.0` or `""` for every IPv4 interface, `::` for every
        /// interface, IPv4 too), `localhost` (127.0.0.1), or a name (its first address, IPv4 first).
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
        var connectionMemory: Int = 16384
        /// Seconds `stop()` waits for requests in progress to be answered (`--shutdown-grace`).
        package var shutdownGracePeriod: Double = 10
        /// How MHD waits for its connections; ``Polling/poll`` unless an experiment says otherwise.
        package var polling: Polling = .poll
    }

    /// How libmicrohttpd waits for its connections to be ready (BENCHMARKS.md, "Live sessions",
    /// measured all three at 1,000 and 10,000 connections).
    package enum Polling: String, Sendable, CaseIterable {
        /// A pool of `threads` threads, each `poll()`ing its share of the connections: what navd
        /// ships. Suspended connections (idle streams, long polls) are left out of the poll set.
        case poll
        /// The same pool with one epoll set per thread. Stalled connections under load in an
        /// early experiment with MHD 0.9.75 (docs/design.md, "Building on libmicrohttpd"); kept for measuring, not for serving.
        case epoll
        /// One thread per connection (no pool). In MHD 0.9.75 every suspended connection's thread
        /// waits on the daemon's one inter-thread channel, so each resume wakes them all, and one
        /// of them may clear the wake-up another needed: views arrived seconds late or never,
        /// and `stop()` can wait for good on a thread that missed its wake-up. Kept for
        /// measuring only.
        case threads
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
    ///   an address and does not resolve, ``HTTPServerError/alreadyRunning``, or
    ///   ``HTTPServerError/startFailed(function:address:reason:)`` when
    ///   `MHD_start_daemon` fails (for example because the port is in use).
    package func start() throws(HTTPServerError) {
        let listen = try ListenAddress.resolve(host: configuration.host, port: configuration.port)
        let context = ServerContext(
            handler: handler,
            logger: logger,
            maxBody: max(0, configuration.maxBody),
            deadlines: configuration.headerTimeout > 0 ? RequestDeadlines(seconds: configuration.headerTimeout, logger: logger) : nil,
            hangups: HangupWatch(logger: logger)
        )
        let retained = Unmanaged.passRetained(context)
        let contextPointer = retained.toOpaque()

        let result: Result<Void, HTTPServerError> = state.withLock { state in
            guard state.running == nil else {
                return .failure(.alreadyRunning)
            }
            let daemon = listen.withSocketAddress { addressPointer, _ in
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
                    MHD_OptionItem(option: .END, value: 0, ptr_value: nil)
                ]
                // A thread per connection takes no pool: MHD refuses the two together.
                if configuration.polling == .threads { options.removeAll { $0.option == .THREAD_POOL_SIZE } }
                return options.withUnsafeMutableBufferPointer { buffer in
                    navd_mhd_start(
                        Self.daemonFlags(configuration.polling, listen),
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
                return .failure(
                    .startFailed(
                        function: "MHD_start_daemon",
                        address: listen.description,
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
            logger.info(
                "HTTP server listening",
                metadata: [
                    "host": "\(configuration.host)",
                    "port": "\(boundPort)",
                    "threads": "\(max(1, configuration.threads))",
                    "polling": "\(configuration.polling.rawValue)"
                ])
        case .failure(let error):
            context.hangups?.stop()
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
        guard
            let running = state.withLock({ state -> Running? in
                defer { state.running = nil }
                return state.running
            })
        else {
            return
        }
        let context = running.context.takeUnretainedValue()
        context.draining.store(true, ordering: .relaxed)
        let listenSocket = MHD_quiesce_daemon(running.daemon)
        // Streams end with what they have written; none stays suspended (MHD cannot stop
        // with a connection suspended) and each is then waited for like any request.
        for stream in context.openStreams() { stream.finish() }
        // Answers still to come are given now, so that no connection stays suspended.
        for deferred in context.waitingAnswers() {
            deferred.resolve(HTTPResponse(status: 503, headers: [("Retry-After", "1"), ("Connection", "close")]))
        }

        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(max(0, configuration.shutdownGracePeriod) * 1000)))
        while context.inFlight.load(ordering: .acquiring) > 0, ContinuousClock.now < deadline {
            usleep(2_000)
        }
        let unanswered = context.inFlight.load(ordering: .acquiring)

        MHD_stop_daemon(running.daemon)
        // Every connection is closed (and unregistered) by now.
        context.deadlines?.stop()
        context.hangups?.stop()
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

    /// Internal polling threads waiting as `polling` says (``Polling/poll`` by default: see
    /// there), an inter-thread channel so that `MHD_quiesce_daemon` works with a thread pool (and
    /// a resumed connection is served at once), error messages routed to the logger, and
    /// connections that may be suspended while a ``ResponseStream`` has nothing to send.
    /// An IPv6 address needs `MHD_USE_IPv6` (MHD then reads a `sockaddr_in6`); `::` is opened
    /// dual-stack, so that it takes IPv4 connections too.
    private static func daemonFlags(_ polling: Polling, _ listen: ListenAddress) -> UInt32 {
        let waiting =
            switch polling {
            case .poll: MHD_USE_POLL.rawValue
            case .epoll: MHD_USE_EPOLL.rawValue
            case .threads: MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_POLL.rawValue
            }
        let family =
            switch listen.family {
            case .ipv4: UInt32(0)
            case .ipv6: listen.isIPv6Any ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue
            }
        return MHD_USE_INTERNAL_POLLING_THREAD.rawValue
            | family
            | waiting
            | MHD_USE_ITC.rawValue
            | MHD_USE_ERROR_LOG.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
    }
}

// MARK: - State shared with the C callbacks

/// What the C callbacks of one running daemon share: immutable apart from
/// atomics and a mutex, so any pool thread may use it.
final class ServerContext: Sendable {
    package let handler: any HTTPHandler
    package let logger: Logger
    package let maxBody: Int
    /// The request deadline's watchdog, when `headerTimeout` is set.
    let deadlines: RequestDeadlines?
    /// Notices clients that hang up while a stream or a deferred answer holds their connection
    /// (nil where the system has no epoll).
    let hangups: HangupWatch?
    /// Requests between their first access-handler call and their
    /// request-completed callback.
    let inFlight = Atomic<Int>(0)
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

    func openStreams() -> [ResponseStream] {
        streams.withLock { Array($0.values) }
    }

    /// Deferred answers not yet queued, so that `stop()` can give them.
    private let deferred = Mutex<[ObjectIdentifier: DeferredResponse]>([:])

    func waiting(_ answer: DeferredResponse) {
        deferred.withLock { $0[ObjectIdentifier(answer)] = answer }
    }

    func answered(_ answer: DeferredResponse) {
        _ = deferred.withLock { $0.removeValue(forKey: ObjectIdentifier(answer)) }
    }

    func waitingAnswers() -> [DeferredResponse] {
        deferred.withLock { Array($0.values) }
    }
    /// MHD's messages while `MHD_start_daemon` runs, for the error it may throw;
    /// nil once the daemon has started.
    private let startupMessages = Mutex<[String]?>([])

    package init(handler: any HTTPHandler, logger: Logger, maxBody: Int, deadlines: RequestDeadlines?, hangups: HangupWatch? = nil) {
        self.handler = handler
        self.logger = logger
        self.maxBody = maxBody
        self.deadlines = deadlines
        self.hangups = hangups
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

/// One request being read: created when its request line is parsed (the URI log
/// callback, whose result MHD keeps as the request's `*con_cls`), filled in on the
/// first access-handler call, and released when MHD reports the request completed.
/// MHD drives a connection from one thread at a time.
final class PendingRequest {
    package var request = HTTPRequest(method: "", path: "")
    /// The body size the client announced, when it announced one.
    var contentLength: Int?
    /// Bytes of the URI, query included, up to its first NUL, measured before MHD cut it up;
    /// -1 when MHD passed none.
    let uriLength: Int
    /// The URI as sent holds a control byte (a CR, a tab, …) or a space: not a target any proxy
    /// agrees on.
    let uriHasStrayByte: Bool
    /// The access handler has seen the request (and counted it in `inFlight`).
    package var started = false
    /// Body bytes received past its `maxBody` (counting what was kept before):
    /// nonzero once the body is known to be too large and is being discarded.
    var discarded = 0
    /// The most body bytes this request may send (``HTTPHandler/bodyLimit(for:configured:)``).
    var maxBody = 0
    /// A response has been queued; anything still uploaded is ignored.
    package var answered = false
    /// The handler's answer is to come through this; the connection is suspended until it does.
    var deferred: DeferredResponse?

    package init(uriLength: Int, uriHasStrayByte: Bool = false) {
        self.uriLength = uriLength
        self.uriHasStrayByte = uriHasStrayByte
    }
}

/// How many bytes of a too-large chunked body are read and thrown away, so
/// that its client still gets the 413, before the connection is dropped.
let discardAllowance = 1 << 20

extension HTTPServer.Configuration {
    // Declared here rather than in the type, so that the type keeps its synthesised memberwise
    // initialiser (internal: this module and its tests name any field there): every other field
    // keeps the default it is declared with, and a caller elsewhere sets the ones it changes.
    package init(threads: Int) {
        self.threads = threads
    }
}
