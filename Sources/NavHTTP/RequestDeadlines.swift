import CMicroHTTPD
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The request deadline (`--header-timeout`): a request must arrive whole, headers and body,
/// within a fixed time, however steadily its bytes trickle in.
///
/// libmicrohttpd's own timeout (`MHD_OPTION_CONNECTION_TIMEOUT`) counts idle time, and every
/// byte resets it: connections that each send a header byte every few seconds held every slot
/// up to the connection limit for as long as they liked, and everyone else waited. So navd
/// keeps its own clock per connection: a connection starts waiting for a request when MHD
/// accepts it and again when the previous answer has gone out (the request-completed callback);
/// it stops once the request is in and goes to the handler (or is refused early). A watchdog
/// closes every connection that has waited longer than the limit with `shutdown(SHUT_RDWR)`,
/// which makes MHD's next read fail and MHD close and clean up the connection on its own
/// thread. An idle keep-alive connection waits for its next request too, so it is closed after
/// the deadline as well (a client cannot be told from one that trickles the request line).
///
/// Threads: MHD registers a connection (`MHD_CONNECTION_NOTIFY_STARTED`) and unregisters it
/// (`…_CLOSED`) on the connection's pool thread, and closes its socket only after `CLOSED`
/// (`MHD_cleanup_connections`, daemon.c in 0.9.75). The watchdog calls `shutdown` only while
/// it holds the lock of the table, and `unregister` takes the same lock: a socket it shuts is
/// always still this connection's, never one closed and reused. The watchdog uses nothing of
/// MHD's; each ``Tracked`` lives until MHD's `CLOSED`, after which MHD never names it again.
package final class RequestDeadlines: Sendable {
    /// One connection MHD holds, kept in its `socket_context` (retained there until `CLOSED`).
    package final class Tracked: Sendable {
        package let socket: Int32
        /// When the connection began waiting for its current request (monotonic ms);
        /// ``answeringMark`` while one is being answered, ``expiredMark`` once the watchdog has
        /// shut it. The watchdog and the connection's thread each move it with a compare-and-swap,
        /// so exactly one of them wins a request that arrives as its deadline passes: either it is
        /// answered, or the connection is shut before the handler sees it — never a change applied
        /// whose answer the watchdog then cuts off.
        package let since: Atomic<Int64>

        static let answeringMark: Int64 = -1
        static let expiredMark: Int64 = -2

        fileprivate init(socket: Int32) {
            self.socket = socket
            self.since = Atomic(RequestDeadlines.milliseconds())
        }

        /// The connection now waits for its next request (its answer has gone out). Reads the
        /// clock itself (vDSO, no system call): a time taken from the watchdog's last tick lagged
        /// by up to a tick, so connections were closed up to a tick before their deadline.
        func awaitRequest() {
            since.store(RequestDeadlines.milliseconds(), ordering: .relaxed)
        }

        /// The request is in (or refused): it is answered however long that takes.
        /// - Returns: false when the watchdog has already shut the connection for being late:
        ///   the request must then not be handled at all.
        package func answering() -> Bool {
            var current = since.load(ordering: .relaxed)
            while true {
                if current == Self.expiredMark { return false }
                if current == Self.answeringMark { return true }
                let (exchanged, original) = since.compareExchange(expected: current, desired: Self.answeringMark, ordering: .relaxed)
                if exchanged { return true }
                current = original
            }
        }

        /// The watchdog's side: marks the connection expired if its request is overdue at `now`
        /// and not yet being answered. - Returns: whether it did (then the caller shuts it).
        package func expire(now: Int64, limit: Int64) -> Bool {
            var current = since.load(ordering: .relaxed)
            while current >= 0, now - current > limit {
                let (exchanged, original) = since.compareExchange(expected: current, desired: Self.expiredMark, ordering: .relaxed)
                if exchanged { return true }
                current = original
            }
            return false
        }
    }

    package let seconds: Int
    private let limit: Int64
    private let interval: Int
    private let logger: Logger
    private let table = Mutex<[ObjectIdentifier: Tracked]>([:])
    /// `nonisolated(unsafe)`: a dispatch source is safe to use from any thread (it is not marked
    /// `Sendable`); ``start()`` sets its handler and resumes it once, ``stop()`` cancels it.
    nonisolated(unsafe) private let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "navd.request-deadlines"))
    private let started = Atomic<Bool>(false)

    package init(seconds: Int, logger: Logger) {
        self.seconds = seconds
        self.limit = Int64(seconds) * 1000
        // A connection is closed at most about a quarter of the limit late (and 250 ms at most).
        self.interval = max(20, min(250, seconds * 1000 / 4))
        self.logger = logger
    }

    /// The ``Tracked`` of a connection, from its `socket_context`.
    static func tracked(_ connection: OpaquePointer) -> Tracked? {
        navd_mhd_socket_context(connection).map { Unmanaged<Tracked>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Starts a new connection's clock. - Returns: the retained ``Tracked``, for its `socket_context`.
    package func register(socket: Int32) -> UnsafeMutableRawPointer {
        let tracked = Tracked(socket: socket)
        table.withLock { $0[ObjectIdentifier(tracked)] = tracked }
        return Unmanaged.passRetained(tracked).toOpaque()
    }

    /// Forgets a connection MHD is about to close; releases what ``register(socket:)`` retained.
    func unregister(_ pointer: UnsafeMutableRawPointer) {
        let tracked = Unmanaged<Tracked>.fromOpaque(pointer)
        table.withLock { $0[ObjectIdentifier(tracked.takeUnretainedValue())] = nil }
        tracked.release()
    }

    deinit {
        // libdispatch traps on releasing a source that was never resumed.
        if !started.load(ordering: .relaxed) { timer.resume() }
        timer.cancel()
    }

    /// Starts the watchdog.
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval), leeway: .milliseconds(interval / 4))
        timer.setEventHandler { [self] in tick() }
        timer.resume()
    }

    /// Stops the watchdog (a tick under way may still finish: it only touches registered sockets).
    package func stop() {
        guard started.load(ordering: .relaxed) else { return }
        timer.cancel()
    }

    /// Shuts every connection whose request is overdue.
    private func tick() {
        let now = Self.milliseconds()
        let limit = self.limit
        let closed = table.withLock { table -> Int in
            var closed = 0
            for tracked in table.values where tracked.expire(now: now, limit: limit) {
                // Once: MHD closes it on its next read.
                shutdown(tracked.socket, Int32(SHUT_RDWR))
                closed += 1
            }
            return closed
        }
        if closed > 0 {
            logger.info(
                "closed connections whose request did not arrive in time",
                metadata: [
                    "connections": "\(closed)", "header_timeout": "\(seconds)"
                ])
        }
    }

    fileprivate static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
