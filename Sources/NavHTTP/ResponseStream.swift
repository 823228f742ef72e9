import CMicroHTTPD
import Synchronization

/// The body of a response that is written while it is being sent: server-sent events, a long
/// answer produced piece by piece (DESIGN §8).
///
/// A handler answers with ``HTTPResponse/init(status:headers:stream:)`` and keeps the stream;
/// any thread then ``write(_:)``s to it and finally ``finish()``es it. The server sends what is
/// written as HTTP/1.1 chunks. While nothing is buffered the connection is suspended
/// (`MHD_suspend_connection`): it costs no pool thread and no polling, and a write resumes it.
///
/// Bounded: a stream buffers at most `bufferLimit` bytes the client has not taken yet. A write
/// that would go past it closes the stream instead (the connection is dropped), so a reader
/// that cannot keep up never holds a writer up or grows memory: it reconnects and resumes.
///
/// A client that went away is noticed when the server next sends to it, as with any socket: a
/// producer that must notice should write something now and then (a heartbeat). Once the
/// connection is done with the stream, whether finished, dropped or gone, ``isOpen`` is false,
/// writes are refused, and the ``onClose(_:)`` handler runs, once.
package final class ResponseStream: Sendable {
    private struct State {
        var buffer: [UInt8] = []
        /// Where the unsent bytes of `buffer` start.
        var sent = 0
        var finished = false
        /// The connection is done with the stream, or it was closed for lagging.
        var closed = false
        /// The stream was closed for going past `bufferLimit`: the connection is dropped.
        var overflowed = false
        /// The connection is suspended waiting for bytes; the next write or finish resumes it.
        var suspended = false
        /// The connection sending this stream, once the server has queued it.
        var connection: Connection?
        var onClose: (@Sendable () -> Void)?
    }

    /// An MHD connection handle. `@unchecked Sendable`: it is used only under the stream's mutex,
    /// by the server's calls, while MHD holds the connection (``detach()`` forgets it).
    private struct Connection: @unchecked Sendable {
        let handle: OpaquePointer
    }

    private let state: Mutex<State>
    /// The most unsent bytes the stream holds.
    package let bufferLimit: Int

    package init(bufferLimit: Int = 1 << 20) {
        self.bufferLimit = max(1, bufferLimit)
        self.state = Mutex(State())
    }

    /// Whether writes are still taken: not finished, not dropped, the client not known gone.
    package var isOpen: Bool {
        state.withLock { !$0.closed && !$0.finished }
    }

    /// Bytes written and not yet handed to the connection.
    package var bufferedCount: Int {
        state.withLock { $0.buffer.count - $0.sent }
    }

    /// Queues `bytes` to be sent.
    /// - Returns: false when the stream no longer takes writes (see ``isOpen``), or when these
    ///   bytes would go past `bufferLimit`: then the stream is closed and its connection dropped.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        var closedNow: (@Sendable () -> Void)?
        let taken = state.withLock { state -> Bool in
            guard !state.closed, !state.finished else { return false }
            guard state.buffer.count - state.sent + bytes.count <= bufferLimit else {
                state.closed = true
                state.overflowed = true
                closedNow = state.onClose
                state.onClose = nil
                Self.resume(&state)
                return false
            }
            if state.sent > 0, state.sent >= state.buffer.count / 2 {
                state.buffer.removeFirst(state.sent)
                state.sent = 0
            }
            if state.buffer.isEmpty {
                // Nothing waiting (the common case): the bytes are taken as they are, shared with
                // whoever else was sent them (every watcher of a change), not copied.
                state.buffer = bytes
            } else {
                state.buffer.append(contentsOf: bytes)
            }
            Self.resume(&state)
            return true
        }
        closedNow?()
        return taken
    }

    /// Ends the body once everything written so far has been sent. Later writes are refused.
    package func finish() {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            Self.resume(&state)
        }
    }

    /// Runs `body` once, when the connection is done with the stream (or at once if it already
    /// is): the client went away, the stream finished and was sent, or it was dropped.
    package func onClose(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard !state.closed else { return true }
            state.onClose = body
            return false
        }
        if now { body() }
    }

    // MARK: The server's side

    /// What the connection should do next.
    enum Read {
        case bytes(Int)
        /// Nothing buffered yet: the connection has been suspended until a write.
        case wait
        case end
        /// Dropped for lagging, or the connection is gone: close it.
        case failed
    }

    /// Binds the stream to the connection sending it; called once, when the response is queued.
    func attach(to connection: OpaquePointer) {
        let bound = Connection(handle: connection)
        state.withLock { $0.connection = bound }
    }

    /// Copies up to `capacity` unsent bytes to `output`, or suspends the connection when there
    /// are none yet. Called by MHD's content reader on the connection's pool thread (where
    /// `MHD_suspend_connection` may be called); the mutex orders the suspension before any resume.
    func read(into output: UnsafeMutablePointer<CChar>, capacity: Int) -> Read {
        state.withLock { state in
            if state.overflowed || (state.closed && !state.finished) { return .failed }
            let available = state.buffer.count - state.sent
            if available > 0 {
                let count = min(available, capacity)
                state.buffer.withUnsafeBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return }
                    UnsafeMutableRawPointer(output).copyMemory(from: base + state.sent, byteCount: count)
                }
                state.sent += count
                if state.sent == state.buffer.count {
                    // Drained: the capacity goes too. A watcher is idle most of its life, and
                    // keeping room for its largest message (a view, a page of events) would cost
                    // every idle watcher that much; the next write allocates what it needs.
                    state.buffer = []
                    state.sent = 0
                }
                return .bytes(count)
            }
            if state.finished { return .end }
            guard let connection = state.connection else { return .failed }
            state.suspended = true
            MHD_suspend_connection(connection.handle)
            return .wait
        }
    }

    /// The connection is done with the stream (MHD freed the response): later writes are
    /// refused and the close handler runs.
    func detach() {
        let closedNow = state.withLock { state -> (@Sendable () -> Void)? in
            state.closed = true
            state.connection = nil
            state.suspended = false
            state.buffer = []
            state.sent = 0
            defer { state.onClose = nil }
            return state.onClose
        }
        closedNow?()
    }

    /// Resumes a suspended connection: MHD then calls the content reader again. Under the mutex,
    /// so a connection is resumed only after it was suspended, and once.
    private static func resume(_ state: inout State) {
        guard state.suspended, let connection = state.connection else { return }
        state.suspended = false
        MHD_resume_connection(connection.handle)
    }
}
