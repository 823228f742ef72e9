import OpenAPIRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A session followed live (docs/design.md, "Live sessions"): `GET /v1/sessions/{id}/events` with
/// `Accept: text/event-stream`, read as typed ``Message``s.
///
/// It opens with the session's current view (after the retained events after `after`, when one
/// was given), then every change anyone applies: its lifecycle events in `seq` order, then the
/// view after it. A connection that drops — the daemon restarted, a proxy cut it, nothing at all
/// (not even a `: ping`) came for ``Options/idleTimeout``, or navd dropped this reader for
/// falling behind (`end` with `lagging`) — is opened again after the daemon's `retry` time with
/// `Last-Event-ID` set to the last event delivered: navd replays what came after it, so no
/// retained event is missed, and none is delivered twice (the stream also drops any `seq` it has
/// delivered already). ``Message/reconnected(lastEventID:)`` marks the seam; the new connection's
/// first message is the view as it is then.
///
/// The stream ends (nil) after ``Message/end(_:)`` (the session was deleted or expired, or the
/// daemon is shutting down) or when the task reading it is cancelled. It throws
/// ``NavClientError``: a refusal (`unauthorized` once the session is gone, say) at once; a
/// connection that cannot be made after ``Options/maxConsecutiveFailures`` attempts in a row.
///
/// Reading is pulled: nothing is read from the connection ahead of the consumer, so a consumer
/// that stops reading holds navd's buffer, not this process's memory, and navd's `lagging`
/// drop, followed by the resume, is what catches it up.
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = Message
    public typealias Failure = NavClientError

    /// One message of the stream.
    public enum Message: Sendable, Hashable {
        /// The session view: on connecting, and after each change's events.
        case view(SessionView)
        /// One lifecycle event (`id:` is its `seq`).
        case lifecycle(LifecycleEvent)
        /// The stream's end: the session was deleted or expired, or the daemon is stopping.
        case end(EndReason)
        /// A heartbeat (`: ping`) on an otherwise quiet stream.
        case ping
        /// The connection dropped and a new one replaced it, resuming after this `seq` (nil:
        /// no event had been delivered, nor a view).
        case reconnected(lastEventID: Int?)
    }

    /// Why a stream ended (`end` `{"reason"}`).
    public enum EndReason: Hashable, Sendable {
        case deleted
        case expired
        case shutdown
        /// A reason this client does not know.
        case other(String)

        init(_ reason: String) {
            switch reason {
            case "deleted": self = .deleted
            case "expired": self = .expired
            case "shutdown": self = .shutdown
            default: self = .other(reason)
            }
        }
    }

    public struct Options: Sendable {
        /// A connection on which nothing arrives for this long is taken for dead and replaced.
        /// Keep it above navd's `--heartbeat` (15 s by default); nil never gives up on one.
        public var idleTimeout: Duration?
        /// The wait before opening a dropped connection again; nil waits as long as the daemon's
        /// `retry` field says (2 s).
        public var reconnectDelay: Duration?
        /// How many connection attempts in a row may fail (no answer) before the stream throws.
        public var maxConsecutiveFailures: Int

        public init(idleTimeout: Duration? = .seconds(45), reconnectDelay: Duration? = nil, maxConsecutiveFailures: Int = 5) {
            self.idleTimeout = idleTimeout
            self.reconnectDelay = reconnectDelay
            self.maxConsecutiveFailures = maxConsecutiveFailures
        }
    }

    let session: NavSession
    let after: Int?
    let options: Options

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(session: session, lastSeq: after, options: options)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = Message
        public typealias Failure = NavClientError

        let session: NavSession
        let options: Options
        /// The `seq` of the last lifecycle event delivered (or the `after` asked for).
        private(set) var lastSeq: Int?
        /// While no event has been delivered: the version of the first view delivered. Events of
        /// changes up to it are in that view already; a resume skips them.
        private var baseVersion: Int?
        private var connection: Connection?
        private var parser = ServerSentEventParser()
        private var queue: [Message] = []
        private var ended = false
        /// Whether a connection was opened before (the next one is a resume).
        private var opened = false
        /// Whether the next attempt waits first (a connection dropped or an attempt failed).
        private var waitFirst = false
        private var failures = 0
        private var retry: Duration = .seconds(2)

        init(session: NavSession, lastSeq: Int?, options: Options) {
            self.session = session
            self.lastSeq = lastSeq
            self.options = options
        }

        public mutating func next() async throws(NavClientError) -> Message? {
            try await next(isolation: nil)
        }

        /// The next message; `for try await` calls this one, on the caller's actor, so what it
        /// throws is typed there too.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NavClientError) -> Message? {
            while true {
                if !queue.isEmpty { return queue.removeFirst() }
                if ended || Task.isCancelled {
                    close()
                    return nil
                }
                guard let connection else {
                    try await connect(isolation: actor)
                    continue
                }
                let chunk: ArraySlice<UInt8>?
                do {
                    chunk = try await connection.nextChunk(within: options.idleTimeout)
                } catch {
                    if Task.isCancelled { continue }
                    close()  // dropped, or silent for too long: open another
                    continue
                }
                guard let chunk else {
                    close()  // the body ended without `end`: open another
                    continue
                }
                let items: [ServerSentEventParser.Item]
                do {
                    items = try parser.feed(chunk)
                } catch {
                    close()
                    throw .unexpectedResponse(operation: Operations.ListEvents.id, status: 200, detail: "\(error)")
                }
                for item in items { try receive(item) }
            }
        }

        /// Opens a connection (again), after the retry time when one was open before.
        private mutating func connect(isolation actor: isolated (any Actor)?) async throws(NavClientError) {
            if waitFirst {
                do {
                    try await Task.sleep(for: options.reconnectDelay ?? retry)
                } catch {
                    ended = true
                    return
                }
            }
            waitFirst = true
            // Resume after the last event delivered; with none yet but a view, after nothing
            // (every retained event; those the view already showed are skipped on arrival).
            let resumeAfter = lastSeq ?? (baseVersion == nil ? nil : 0)
            do {
                let output = try await session.api.listEvents(
                    path: .init(id: session.id),
                    headers: .init(lastEventID: resumeAfter.map(String.init), accept: [.init(contentType: .textEventStream)])
                )
                guard case .ok(let ok) = output, case .textEventStream(let body) = ok.body else {
                    throw NavClientError.unexpected(output, operation: Operations.ListEvents.id)
                }
                connection = Connection(body: body)
                parser = ServerSentEventParser()
                if opened { queue.append(.reconnected(lastEventID: lastSeq)) }
                opened = true
            } catch {
                let sorted = NavClientError(error, operation: Operations.ListEvents.id)
                switch sorted {
                case .cancelled:
                    ended = true
                case .transport:
                    failures += 1
                    if failures >= options.maxConsecutiveFailures {
                        ended = true
                        throw sorted
                    }
                case .problem, .unexpectedResponse:
                    ended = true
                    throw sorted
                }
            }
        }

        private mutating func receive(_ item: ServerSentEventParser.Item) throws(NavClientError) {
            failures = 0
            switch item {
            case .retry(let milliseconds):
                retry = .milliseconds(milliseconds)
            case .comment(let text):
                // A stream opens with `: heartbeat <seconds>`, the daemon's interval: an
                // announcement, not a heartbeat of a quiet stream.
                if !text.hasPrefix("heartbeat ") { queue.append(.ping) }
            case .message(let event, let data, _):
                switch event {
                case "view":
                    let view = try decode(SessionView.self, data, event)
                    if lastSeq == nil, baseVersion == nil { baseVersion = view.version }
                    queue.append(.view(view))
                case "lifecycle":
                    let lifecycle = try decode(LifecycleEvent.self, data, event)
                    if let lastSeq, lifecycle.seq <= lastSeq { return }
                    if lastSeq == nil, let baseVersion, lifecycle.transition <= baseVersion { return }
                    lastSeq = lifecycle.seq
                    queue.append(.lifecycle(lifecycle))
                case "end":
                    let reason = try decode(EndMessage.self, data, event).reason
                    close()
                    if reason == "lagging" { return }  // dropped for falling behind: resume
                    queue.append(.end(EndReason(reason)))
                    ended = true
                default:
                    break  // a message type this client does not know
                }
            }
        }

        private func decode<T: Decodable>(_ type: T.Type, _ data: String, _ event: String) throws(NavClientError) -> T {
            do {
                return try JSONDecoder().decode(type, from: Data(data.utf8))
            } catch {
                throw .unexpectedResponse(
                    operation: Operations.ListEvents.id, status: 200, detail: "`\(event)` data that is not \(type): \(error)")
            }
        }

        private mutating func close() {
            connection = nil  // its body's iterator goes with it, which closes the connection
        }
    }

    struct EndMessage: Decodable {
        var reason: String
    }
}

/// One open stream: the response body, read a chunk at a time.
///
/// `@unchecked Sendable`: the body's iterator is used by one task at a time — the iterator's
/// own, or the one child task it awaits in ``nextChunk(within:)`` — and never after that child
/// was cancelled for silence (the connection is dropped then).
final class Connection: @unchecked Sendable {
    private var iterator: HTTPBody.AsyncIterator

    struct Silent: Error, CustomStringConvertible {
        var description: String { "nothing arrived on the event stream within the idle timeout" }
    }

    init(body: HTTPBody) {
        iterator = body.makeAsyncIterator()
    }

    /// The next chunk of the body (nil at its end).
    /// - Throws: ``Silent`` when nothing arrives within `timeout`; what the transport throws.
    func nextChunk(within timeout: Duration?) async throws -> ArraySlice<UInt8>? {
        guard let timeout else { return try await iterator.next() }
        return try await withThrowingTaskGroup(of: ArraySlice<UInt8>?.self) { group in
            group.addTask { try await self.iterator.next() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw Silent()
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }
}
