import NavHTTP
import NavJSON
import NavSessions
import NavWire

/// A stream of the feed (`GET /v1/feed` with `Accept: text/event-stream`): every record after
/// where it started, as `id: <cursor>`, `event: record`, `data: <record>`, in cursor order, none
/// twice. A watcher of ``SessionService/feedWatchKey``: each record written (here, or in another
/// process sharing the store) makes it read the store from its last cursor, a page at a time,
/// paced by the client (while its buffer is half full, the next page waits: 1 ms, then twice as
/// long each time it is still half full, up to 50 ms, so a client reading at full speed is not
/// left idle and one that does not read costs a look every 50 ms).
final class FeedStream: SessionWatcher {
    private struct Progress {
        var start: FeedStart
        var reading = false
        var again = false
        var done = false
        /// How long the next page waits while the client's buffer is half full.
        var pause = FeedStream.shortestPause
    }

    private let sessions: SessionService
    private let stream: ResponseStream
    private let form: FeedForm
    private let progress: Locked<Progress>
    private static let page = 250
    private static let shortestPause = 0.001
    private static let longestPause = 0.05

    private init(sessions: SessionService, stream: ResponseStream, start: FeedStart, form: FeedForm) {
        self.sessions = sessions
        self.stream = stream
        self.form = form
        self.progress = Locked(Progress(start: start))
        stream.onShed { [weak self, sessions] in
            guard let self else { return }
            sessions.live.remove(self, from: SessionService.feedWatchKey)
            sessions.live.watchersDropped.add(1, ordering: .relaxed)
        }
    }

    /// Starts the stream: checks `start` (a cursor never given or expired is a problem answer, not a stream),
    /// adds the watcher within the daemon's watcher budget, and reads what is retained.
    static func start(
        sessions: SessionService, from start: FeedStart, param: String, form: FeedForm, context: RequestContext, bufferLimit: Int,
        pool: StreamBuffers?
    ) throws -> HTTPResponse {
        _ = try sessions.feed(from: start, limit: 1, form: form, param: param)
        let headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]
        if context.request.method == "HEAD" { return HTTPResponse(status: 200, headers: headers) }
        let stream = ResponseStream(bufferLimit: bufferLimit, pool: pool, farewell: EventStream.lagging)
        let watcher = FeedStream(sessions: sessions, stream: stream, start: start, form: form)
        try EventRoutes.add(watcher, to: SessionService.feedWatchKey, in: sessions.live, limit: Int.max)
        stream.onClose { [sessions] in sessions.live.remove(watcher, from: SessionService.feedWatchKey) }
        var opening = JSONWriter(reservingCapacity: 32)
        opening.writeHeartbeatAnnouncement(seconds: sessions.live.heartbeatSeconds)
        opening.writeRetry(milliseconds: 2000)
        _ = stream.write(opening.finish())
        watcher.refresh()
        return HTTPResponse(status: 200, headers: headers, stream: stream)
    }

    func receive(_ change: LiveChange) { refresh() }

    func refresh() {
        let start = progress.withLock { progress -> Bool in
            guard !progress.done else { return false }
            if progress.reading {
                progress.again = true
                return false
            }
            progress.reading = true
            return true
        }
        if start { schedule() }
    }

    func end(_ reason: EndReason) {
        progress.withLock { progress in
            guard !progress.done else { return }
            progress.done = true
            var message = JSONWriter(reservingCapacity: 64)
            message.writeEndMessage(reason: reason.rawValue)
            _ = stream.write(message.finish())
            stream.finish()
        }
    }

    func ping() {
        progress.withLock { progress in
            guard !progress.done else { return }
            if !stream.write(.ping) { stop(&progress) }
        }
    }

    private func schedule(after delay: Double = 0) {
        sessions.live.run(after: delay) { self.read() }
    }

    /// Reads and writes pages until the feed has nothing more, then waits to be refreshed.
    private func read() {
        while true {
            let start = progress.withLock { $0.start }
            if stream.bufferedCount > stream.bufferLimit / 2 {
                let pause = progress.withLock { progress -> Double in
                    defer { progress.pause = min(progress.pause * 2, Self.longestPause) }
                    return progress.pause
                }
                schedule(after: pause)
                return
            }
            let page: FeedPage
            do {
                page = try sessions.feed(from: start, limit: Self.page, form: form)
            } catch {
                if error.code == .cursorExpired {
                    // Records this stream had not sent yet were swept: it cannot go on without a gap.
                    end(.lagging)
                    sessions.live.remove(self, from: SessionService.feedWatchKey)
                    return
                }
                schedule(after: 1)
                return
            }
            let finished = progress.withLock { progress -> Bool in
                guard !progress.done else { return true }
                progress.pause = Self.shortestPause
                var next = page.next
                if !page.entries.isEmpty {
                    // What fills the buffer to half (one record at least): a page of large records
                    // goes in parts, each a write the buffer takes, never one it refuses whole (the
                    // stream would be cut, and its resume would ask for the same page again).
                    let room = max(1, stream.bufferLimit / 2 - stream.bufferedCount)
                    var messages = JSONWriter(reservingCapacity: min(room, page.entries.reduce(0) { $0 + $1.members.count + 160 }))
                    var sent = 0
                    for entry in page.entries {
                        messages.writeLiteral("id: ")
                        messages.writeRaw(bytes: Array(entry.cursor.description.utf8))
                        messages.writeLiteral("\nevent: record\ndata: ")
                        entry.write(into: &messages)
                        messages.writeLiteral("\n\n")
                        sent += 1
                        if messages.writtenCount >= room { break }
                    }
                    if !stream.write(messages.finish()) {
                        stop(&progress)
                        return true
                    }
                    sessions.live.messagesSent.add(sent, ordering: .relaxed)
                    if sent < page.entries.count { next = page.entries[sent - 1].cursor }
                }
                progress.start = page.entries.isEmpty ? start.continuing(after: page) : .after(next)
                if page.entries.count == Self.page || page.cut || next != page.next { return false }
                if progress.again {
                    progress.again = false
                    return false
                }
                progress.reading = false
                return true
            }
            if finished { return }
        }
    }

    /// The client is gone (or its buffer would overflow): let the watcher go.
    private func stop(_ progress: inout Progress) {
        progress.done = true
        sessions.live.remove(self, from: SessionService.feedWatchKey)
    }
}
