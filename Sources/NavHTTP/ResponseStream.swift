import CMicroHTTPD
import Synchronization

/// The body of a response that is written while it is being sent: server-sent events, a long
/// answer produced piece by piece (docs/design.md, "Live sessions").
///
/// A handler answers with ``HTTPResponse/init(status:headers:stream:)`` and keeps the stream;
/// any thread then ``write(_:)``s to it and finally ``finish()``es it. The server sends what is
/// written as HTTP/1.1 chunks. While nothing is buffered the connection is suspended
/// (`MHD_suspend_connection`): it costs no pool thread and no polling, and a write resumes it.
///
/// Bounded: a stream buffers at most `bufferLimit` bytes the client has not taken yet. A write
/// that would go past it closes the stream instead (the connection is dropped), so a reader
/// that cannot keep up never holds a writer up or grows memory: it reconnects and resumes. One
/// message larger than that still goes to a reader that keeps up (at most half the limit
/// waiting): a record or a view navd made within its own bounds (`--max-body` raised far, say)
/// would otherwise cut every stream it is sent on, again at every resume. So a stream holds at
/// most half its limit plus one message, and the pool counts all of it.
///
/// A client that went away is noticed at once, suspended or not: the server watches the socket
/// of every streamed answer for a hang-up (``HangupWatch``) and cuts the stream. Once the
/// connection is done with the stream, whether finished, dropped or gone, ``isOpen`` is false,
/// writes are refused, and the ``onClose(_:)`` handler runs, once.
///
/// With a ``StreamBuffers`` pool, what the stream holds also counts against one budget for all
/// streams; a stream holding the most of a full pool is shed (``shed()``).
package final class ResponseStream: Sendable {
    private struct State {
        /// The writes not yet handed to the connection, oldest first, each the array it was
        /// written as (shared with whoever else was sent it: every watcher of a change), not
        /// copied into one buffer.
        var chunks: [[UInt8]] = []
        /// The first chunk not yet handed over whole.
        var head = 0
        /// Bytes of `chunks[head]` already handed over.
        var offset = 0
        /// Bytes written and not yet handed over.
        var unsent = 0
        /// What the chunks hold, as counted against the pool (see ``ResponseStream/held``).
        var held = 0
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
        var onShed: (@Sendable () -> Void)?

        /// Forgets every chunk not yet handed over, but the one partly handed over when
        /// `keepingPartial`: the client never gets half a message.
        mutating func discard(keepingPartial: Bool) {
            let kept = keepingPartial && offset > 0 && head < chunks.count ? [chunks[head]] : []
            chunks = kept
            head = 0
            unsent = kept.first.map { $0.count - offset } ?? 0
            if kept.isEmpty { offset = 0 }
            held = kept.reduce(0) { $0 + ResponseStream.cost(of: $1) }
        }
    }

    /// An MHD connection handle. `@unchecked Sendable`: it is used only under the stream's mutex,
    /// by the server's calls, while MHD holds the connection (``detach()`` forgets it).
    private struct Connection: @unchecked Sendable {
        let handle: OpaquePointer
    }

    private let state: Mutex<State>
    /// The most unsent bytes the stream holds.
    package let bufferLimit: Int
    /// The daemon-wide budget of bytes streams hold, if this stream counts against one.
    package let pool: StreamBuffers?
    /// What the stream writes last when it is shed (``shed()``): the owner's word for "you could
    /// not keep up" (an event stream's `end` message with reason `lagging`).
    private let farewell: [UInt8]
    /// ``State/held``, readable without the mutex (the pool compares streams by it).
    private let heldNow = Atomic<Int>(0)

    package init(bufferLimit: Int = 1 << 20, pool: StreamBuffers? = nil, farewell: [UInt8] = []) {
        self.bufferLimit = max(1, bufferLimit)
        self.pool = pool
        self.farewell = farewell
        self.state = Mutex(State())
    }

    /// Whether writes are still taken: not finished, not dropped, the client not known gone.
    package var isOpen: Bool {
        state.withLock { !$0.closed && !$0.finished }
    }

    /// Bytes written and not yet handed to the connection.
    package var bufferedCount: Int {
        state.withLock { $0.unsent }
    }

    /// The memory the stream holds for its client: the capacity of every write not yet handed
    /// over whole, each counted in full even when other streams share it (docs/design.md, "Bytes
    /// buffered for watchers"), plus the queue's own slot per write.
    package var held: Int { heldNow.load(ordering: .relaxed) }

    /// What one queued write costs: its array's capacity and its slot in the queue.
    static func cost(of chunk: [UInt8]) -> Int {
        chunk.capacity + MemoryLayout<[UInt8]>.stride
    }

    /// Queues `bytes` to be sent.
    /// - Returns: false when the stream no longer takes writes (see ``isOpen``), or when these
    ///   bytes would go past `bufferLimit` while more than half of it waits: then the stream is
    ///   closed and its connection dropped.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return isOpen }
        var closedNow: (@Sendable () -> Void)?
        var delta = 0
        let taken = state.withLock { state -> Bool in
            guard !state.closed, !state.finished else { return false }
            let before = state.held
            defer {
                delta = state.held - before
                heldNow.store(state.held, ordering: .relaxed)
            }
            guard state.unsent + bytes.count <= bufferLimit || state.unsent <= bufferLimit / 2 else {
                state.closed = true
                state.overflowed = true
                state.discard(keepingPartial: false)
                closedNow = state.onClose
                state.onClose = nil
                state.onShed = nil
                Self.resume(&state)
                return false
            }
            if state.head > 16, state.head * 2 > state.chunks.count {
                state.chunks.removeFirst(state.head)
                state.head = 0
            }
            state.chunks.append(bytes)
            state.unsent += bytes.count
            state.held += Self.cost(of: bytes)
            Self.resume(&state)
            return true
        }
        pool?.charge(delta)
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

    /// Ends the stream for a client that cannot keep up, and frees what it holds at once: every
    /// write not yet handed over is dropped (but one partly handed over, so that the client never
    /// gets half a message), then the stream's farewell is written and the stream finished. The
    /// ``onShed(_:)`` handler runs. The client resumes from the last message it got whole.
    /// - Parameter farewell: what to write last, when not the farewell the stream was made with.
    /// - Returns: false, doing nothing, when the stream had already finished or closed.
    @discardableResult
    package func shed(with farewell: [UInt8]? = nil) -> Bool {
        let farewell = farewell ?? self.farewell
        var delta = 0
        let told = state.withLock { state -> (@Sendable () -> Void)?? in
            guard !state.closed, !state.finished else { return nil }
            let before = state.held
            state.discard(keepingPartial: true)
            if !farewell.isEmpty {
                state.chunks.append(farewell)
                state.unsent += farewell.count
                state.held += Self.cost(of: farewell)
            }
            state.finished = true
            delta = state.held - before
            heldNow.store(state.held, ordering: .relaxed)
            Self.resume(&state)
            defer { state.onShed = nil }
            return .some(state.onShed)
        }
        pool?.charge(delta)
        guard case .some(let handler) = told else { return false }
        handler?()
        return true
    }

    /// Drops the connection now and frees everything the stream holds, a message half sent
    /// included: for a stream that holds the most of a full pool even after ``shed()``, and for
    /// a client that hung up. The close handler runs.
    package func cut() {
        var delta = 0
        let closedNow = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.closed else { return nil }
            let before = state.held
            state.closed = true
            state.overflowed = true
            state.discard(keepingPartial: false)
            delta = state.held - before
            heldNow.store(state.held, ordering: .relaxed)
            Self.resume(&state)
            defer {
                state.onClose = nil
                state.onShed = nil
            }
            return state.onClose
        }
        pool?.charge(delta)
        closedNow?()
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

    /// Runs `body` once if the stream is shed (``shed()``), by its owner or by the pool.
    package func onShed(_ body: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if !state.closed, !state.finished { state.onShed = body }
        }
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
        pool?.opened(self)
    }

    /// Copies up to `capacity` unsent bytes to `output`, or suspends the connection when there
    /// are none yet. Called by MHD's content reader on the connection's pool thread (where
    /// `MHD_suspend_connection` may be called); the mutex orders the suspension before any resume.
    func read(into output: UnsafeMutablePointer<CChar>, capacity: Int) -> Read {
        var delta = 0
        let next = state.withLock { state -> Read in
            if state.overflowed || (state.closed && !state.finished) { return .failed }
            if state.unsent > 0 {
                let before = state.held
                var copied = 0
                while copied < capacity, state.head < state.chunks.count {
                    let offset = state.offset
                    let count = state.chunks[state.head].withUnsafeBufferPointer { chunk -> Int in
                        let count = min(chunk.count - offset, capacity - copied)
                        if let base = chunk.baseAddress {
                            UnsafeMutableRawPointer(output + copied).copyMemory(from: base + offset, byteCount: count)
                        }
                        return count
                    }
                    copied += count
                    state.offset += count
                    if state.offset == state.chunks[state.head].count {
                        state.held -= Self.cost(of: state.chunks[state.head])
                        // The array goes now, not when the queue is next compacted.
                        state.chunks[state.head] = []
                        state.head += 1
                        state.offset = 0
                    }
                }
                state.unsent -= copied
                if state.head == state.chunks.count {
                    // Drained: the queue's capacity goes too. A watcher is idle most of its life.
                    state.chunks = []
                    state.head = 0
                }
                delta = state.held - before
                heldNow.store(state.held, ordering: .relaxed)
                return .bytes(copied)
            }
            if state.finished { return .end }
            guard let connection = state.connection else { return .failed }
            state.suspended = true
            MHD_suspend_connection(connection.handle)
            return .wait
        }
        if delta != 0 { pool?.charge(delta) }
        return next
    }

    /// The connection is done with the stream (MHD freed the response): later writes are
    /// refused and the close handler runs.
    func detach() {
        var delta = 0
        let closedNow = state.withLock { state -> (@Sendable () -> Void)? in
            let before = state.held
            state.closed = true
            state.connection = nil
            state.suspended = false
            state.discard(keepingPartial: false)
            delta = state.held - before
            heldNow.store(0, ordering: .relaxed)
            defer {
                state.onClose = nil
                state.onShed = nil
            }
            return state.onClose
        }
        pool?.charge(delta)
        pool?.closed(self)
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

extension ResponseStream: HangupListener {
    /// The client is gone: the stream is cut (its bytes freed, its close handler run) and its
    /// connection resumed if suspended, so that MHD closes it.
    func clientHungUp() { cut() }
}

/// Something that counts bytes against a daemon-wide bound (navd's `Budget`).
package protocol ByteBudget: AnyObject, Sendable {
    var limit: Int { get }
    var used: Int { get }
    /// Counts `amount` whether or not it fits. - Returns: what is counted now.
    @discardableResult func force(_ amount: Int) -> Int
    func release(_ amount: Int)
}

/// One budget for the bytes every ``ResponseStream`` made with it holds for its client
/// (docs/design.md, "Bytes buffered for watchers").
///
/// Each stream counts what it holds as it changes (a write, a read that drains a write, a drop).
/// Once a write takes the total past the limit, the stream holding the most is shed
/// (``ResponseStream/shed()``: its unsent writes freed, its farewell written), and the next
/// largest after it, until the total is within the limit again; a stream still the largest after
/// it was shed (a large message half sent) is cut. So the one that hoards is dropped, not the one
/// that happened to write last, and what streams hold stays within the budget give or take the
/// write in progress. Streams are listed from when they are sent until the connection is done.
package final class StreamBuffers: Sendable {
    package let budget: any ByteBudget
    private let streams = Mutex<[ObjectIdentifier: ResponseStream]>([:])
    /// Streams shed or cut to keep within the budget.
    package let dropped = Atomic<Int>(0)

    package init(budget: any ByteBudget) {
        self.budget = budget
    }

    func opened(_ stream: ResponseStream) {
        streams.withLock { $0[ObjectIdentifier(stream)] = stream }
    }

    func closed(_ stream: ResponseStream) {
        _ = streams.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// Counts a change of what a stream holds (never under a stream's mutex); past the limit,
    /// makes room.
    func charge(_ delta: Int) {
        if delta < 0 {
            budget.release(-delta)
            return
        }
        guard delta > 0, budget.force(delta) > budget.limit else { return }
        makeRoom()
    }

    /// Sheds (or cuts) the stream holding the most until the total is within the limit.
    private func makeRoom() {
        while budget.used > budget.limit {
            let largest = streams.withLock { streams -> ResponseStream? in
                var largest: ResponseStream?
                var most = 0
                for stream in streams.values {
                    let held = stream.held
                    if held > most {
                        most = held
                        largest = stream
                    }
                }
                return largest
            }
            guard let largest else { return }
            dropped.add(1, ordering: .relaxed)
            if !largest.shed() { largest.cut() }
        }
    }
}
