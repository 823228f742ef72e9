import CMicroHTTPD
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Something that holds a suspended connection for a client (a stream, a deferred answer) and
/// must let it go when that client hangs up.
protocol HangupListener: AnyObject, Sendable {
    /// The client closed its end of the connection. Called on the watch's thread: frees what the
    /// client held and resumes the connection if it is suspended, so that MHD closes it.
    func clientHungUp()
}

/// Notices clients that hang up while their connection waits: an event stream with nothing to
/// send, a long poll with nothing to answer yet (docs/design.md, "Watchers").
///
/// libmicrohttpd does not poll a suspended connection, so a client that closed one was noticed
/// only at the next heartbeat (a stream) or when the wait ended (a long poll, up to 60 s), and
/// meanwhile its watcher slot, its descriptor and its connection slot stayed taken: a few
/// thousand long polls opened and dropped locked everyone else out. So the server hands the
/// socket of every connection that answers with a stream or a deferred response to this watch,
/// which waits on them in one epoll set for `EPOLLRDHUP`/`EPOLLHUP`/`EPOLLERR` (a peer's FIN or
/// reset; data a client pipelined is not asked for, so it is no event) and tells the listener.
///
/// Descriptor reuse: the watch never acts on a descriptor. An event carries a token, unique for
/// the process's life, that names one listener; the token is forgotten when the listener is done
/// with the connection (the stream freed, the answer queued), which MHD does before it closes
/// the socket, and the kernel drops a closed socket from the epoll set by itself. A late event
/// for a forgotten token finds nothing; one for a listener done with its connection finds it
/// detached, and the listener then does nothing (it resumes only a connection it suspended).
final class HangupWatch: Sendable {
    private struct Table {
        var listeners: [UInt64: any HangupListener] = [:]
        var tokens: [ObjectIdentifier: UInt64] = [:]
        var nextToken: UInt64 = 1
    }

    private let epoll: Int32
    private let wakeup: Int32
    private let table = Mutex(Table())
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger

    /// Creates the watch and starts its thread; nil when the system has no epoll (the hang-up is
    /// then noticed as before: at the next write, or when the wait ends).
    init?(logger: Logger) {
        #if os(Linux)
            var wakeup: Int32 = -1
            let epoll = navd_hangup_open(&wakeup)
            guard epoll >= 0 else { return nil }
            self.epoll = epoll
            self.wakeup = wakeup
            self.logger = logger
            // It blocks in epoll_wait for the server's life: on a queue of its own it holds one of
            // libdispatch's worker threads, and no other queue waits behind it.
            DispatchQueue(label: "navd.hangups").async { [self] in run() }
        #else
            return nil
        #endif
    }

    /// Watches `socket` (the connection's, held open by MHD while `listener` is attached to it)
    /// until ``forget(_:)``.
    func watch(socket: Int32, _ listener: any HangupListener) {
        #if os(Linux)
            guard socket >= 0 else { return }
            let token = table.withLock { table -> UInt64 in
                let token = table.nextToken
                table.nextToken += 1
                table.listeners[token] = listener
                table.tokens[ObjectIdentifier(listener)] = token
                return token
            }
            // Outside the lock: a system call. An event can only come once the socket is in the set,
            // and by then the token is in the table.
            let failed = navd_hangup_watch(epoll, socket, token)
            if failed != 0 {
                forget(listener)
                logger.debug("cannot watch a connection for hang-ups", metadata: ["errno": "\(failed)"])
            }
        #endif
    }

    /// The listener is done with its connection: its hang-up no longer matters.
    func forget(_ listener: any HangupListener) {
        table.withLock { table in
            guard let token = table.tokens.removeValue(forKey: ObjectIdentifier(listener)) else { return }
            table.listeners[token] = nil
        }
    }

    /// Stops the thread and closes the epoll set; waits for the thread to be done with it.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        #if os(Linux)
            navd_hangup_wake(wakeup)
        #endif
        finished.wait()
        close(epoll)
        close(wakeup)
        table.withLock { $0 = Table() }
    }

    deinit { stop() }

    private func run() {
        #if os(Linux)
            var tokens = [UInt64](repeating: 0, count: 64)
            while !stopping.load(ordering: .acquiring) {
                let count = tokens.withUnsafeMutableBufferPointer { navd_hangup_wait(epoll, $0.baseAddress, Int32($0.count), -1) }
                if count < 0 {
                    if errno == EINTR { continue }
                    logger.error(
                        "waiting for hang-ups failed; suspended connections are let go at their next write", metadata: ["errno": "\(errno)"]
                    )
                    break
                }
                for token in tokens[..<Int(count)] where token != 0 {
                    let listener = table.withLock { table -> (any HangupListener)? in
                        guard let listener = table.listeners.removeValue(forKey: token) else { return nil }
                        table.tokens[ObjectIdentifier(listener)] = nil
                        return listener
                    }
                    listener?.clientHungUp()
                }
            }
        #endif
        finished.signal()
    }
}
