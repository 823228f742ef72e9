import Dispatch
import Logging
import NavJSON
import NavSessions
import Synchronization

/// Delivers the feed to one endpoint, on a thread of its own, so that a slow or dead receiver
/// holds up nothing else: reads the analytics form after its position, sends batches of at most
/// ``Timing/batchSize`` records, and moves its position (kept in the store under
/// `webhook:<name>`) only once the receiver answered 2xx. A failed batch is sent again, the same
/// records under the same id, after a back-off that doubles up to ``Timing/maxBackoff``, for as
/// long as its records are retained. Only the process holding the endpoint's lease
/// (`webhook-lease:<name>`, see ``WebhookLease``) delivers.
package final class WebhookDeliverer: Sendable {
    /// The delays and sizes delivery runs with; tests shorten some.
    package struct Timing: Sendable {
        /// Most records in one batch.
        package var batchSize = 100
        /// How often an idle deliverer looks for new records.
        package var poll: Duration = .milliseconds(200)
        /// The first wait after a failed attempt; doubled after each failure up to `maxBackoff`.
        package var backoff: Duration = .seconds(1)
        package var maxBackoff: Duration = .seconds(30)
        /// How often the lease is taken or renewed, and how long it lasts unrenewed.
        package var leaseRenewal: Duration = .seconds(5)
        package var leaseExpiry: Duration = .seconds(15)

        package init() {}
    }

    /// What `GET /v1/webhooks` and `/metrics` show of an endpoint.
    package struct Status: Sendable, Equatable {
        package var name: String
        /// The cursor delivered up to; nil before the first read of the store.
        package var position: String?
        /// Seconds since the oldest record not delivered yet was written; 0 when none waits.
        /// Worked out when the status is read, so it grows while a receiver fails or hangs, not
        /// only at each attempt (which a 30 s back-off and a 10 s time-out space out).
        package var lagSeconds: Double = 0
        /// When the oldest record of the batch being delivered was written (ms since the epoch);
        /// nil when none waits.
        var waitingSince: Int64?
        /// Records acknowledged by the receiver, by this process.
        package var delivered = 0
        /// Attempts by outcome: acknowledged (2xx), rejected (4xx), failed (anything else, or no answer).
        package var acknowledged = 0
        package var rejected = 0
        package var failed = 0
        /// Times records expired before they could be delivered (the position skipped to the oldest retained).
        package var skipped = 0
        /// When the last attempt was made (ms since the epoch).
        package var lastAttempt: Int64?
        /// Why the last attempt failed (`HTTP 500`, libcurl's words); nil after a success.
        package var lastError: String?
        /// Whether this process holds the endpoint's lease, and so delivers to it.
        package var leaseHeld = false
    }

    package let endpoint: WebhookEndpoint
    private let sessions: SessionService
    private let meta: any MetaStore
    private let poster: any WebhookPosting
    private let logger: Logger
    private let timing: Timing
    private let lease: WebhookLease
    private let state: Mutex<Status>
    private let stopped = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// Signalled to cut a wait short (stopping).
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let now: @Sendable () -> Int64

    /// The store key of `name`'s position.
    package static func positionKey(_ name: String) -> String { "webhook:" + name }

    package init(
        endpoint: WebhookEndpoint, sessions: SessionService, meta: (any MetaStore)? = nil, poster: (any WebhookPosting)? = nil,
        owner: String, logger: Logger, timing: Timing = Timing(), now: @escaping @Sendable () -> Int64 = Clock.milliseconds
    ) {
        self.endpoint = endpoint
        self.sessions = sessions
        let meta = meta ?? sessions.store
        self.meta = meta
        self.poster = poster ?? CurlPoster()
        self.logger = logger
        self.timing = timing
        self.now = now
        self.lease = WebhookLease(
            key: "webhook-lease:" + endpoint.name, owner: owner, meta: meta, expiry: timing.leaseExpiry.milliseconds, now: now)
        self.state = Mutex(Status(name: endpoint.name))
    }

    package var status: Status {
        var status = state.withLock { $0 }
        status.leaseHeld = lease.isHeld
        if let since = status.waitingSince { status.lagSeconds = max(0, Double(now() - since) / 1000) }
        return status
    }

    /// Starts delivering, on a thread of its own, with the lease renewed beside it.
    package func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        lease.start(every: timing.leaseRenewal)
        // It blocks (in posts and waits) for the daemon's life: on a queue of its own it holds one
        // of libdispatch's worker threads, and no other queue waits behind it.
        DispatchQueue(label: "navd.webhook." + endpoint.name).async { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops delivering, and gives the lease up. A post in progress gets ``stopGrace`` to be
    /// answered, so that a batch the receiver took is acknowledged here rather than sent again by
    /// whoever delivers next; one still unanswered then is cut short. Waits for the thread.
    package func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        guard started.load(ordering: .relaxed) else {
            poster.cancel()
            return
        }
        if finished.wait(timeout: .now() + Self.stopGrace) == .timedOut {
            poster.cancel()
            finished.wait()
        }
        lease.stop()
    }

    /// How long ``stop()`` lets a post in progress finish before cutting it short.
    static let stopGrace = DispatchTimeInterval.seconds(2)

    // MARK: The loop

    /// What the loop holds between rounds, on its thread only.
    private struct Progress {
        /// The cursor delivered up to, and the value the store held for it when last read or written.
        var position: FeedCursor?
        var stored: String?
        /// The position moved past records of other graphs, not yet written to the store.
        var unsaved = false
        /// The batch being sent: fixed until acknowledged or expired.
        var batch: WebhookBatch?
        var attempts = 0
        var backoff: Duration
        /// The lease taken this position was read under: read again after a new one.
        var leaseTerm = -1
        /// Read from the oldest record retained next (the position expired).
        var fromOldest = false
        /// The error last logged, so that a failure is logged once per change of error.
        var logged: String?
    }

    private func run() {
        var progress = Progress(backoff: timing.backoff)
        while !stopped.load(ordering: .relaxed) {
            let term = lease.term
            guard term >= 0 else {
                progress.batch = nil
                progress.position = nil
                state.withLock { $0.waitingSince = nil }
                pause(timing.poll)
                continue
            }
            do throws(WebhookError) {
                if progress.leaseTerm != term || progress.position == nil {
                    try load(&progress)
                    progress.leaseTerm = term
                }
                if progress.unsaved, progress.batch == nil { try save(&progress, to: progress.position) }
                if progress.batch == nil, try !read(&progress) {
                    pause(timing.poll)
                    continue
                }
                try attempt(&progress)
            } catch {
                note(error.message, &progress)
                pause(timing.poll * 5)
            }
        }
    }

    /// Reads the stored position; a new endpoint starts at the newest record (and stores it).
    private func load(_ progress: inout Progress) throws(WebhookError) {
        progress.batch = nil
        progress.attempts = 0
        progress.backoff = timing.backoff
        let key = Self.positionKey(endpoint.name)
        let stored = try WebhookError.store { () throws(StoreError) in try meta.metaValue(key) }
        if let stored, let cursor = FeedCursor(stored) {
            progress.position = cursor
            progress.stored = stored
        } else {
            if stored != nil { logger.warning("webhook position unreadable; starting at the newest record", metadata: meta(stored)) }
            let newest = try WebhookError.service { () throws(ServiceError) in
                try sessions.feed(from: .since(.max), limit: 1, form: .analytics).next
            }
            progress.stored = stored
            try save(&progress, to: newest)
        }
        let position = progress.position?.description
        state.withLock { $0.position = position }
    }

    private func meta(_ stored: String?) -> Logger.Metadata {
        ["endpoint": "\(endpoint.name)", "stored": "\(stored ?? "")"]
    }

    /// Writes the position, if the store still holds what this process last saw there: another
    /// process that took the lease meanwhile may have moved it, and then its value wins.
    private func save(_ progress: inout Progress, to cursor: FeedCursor?) throws(WebhookError) {
        guard let cursor else { return }
        let value = cursor.description
        let key = Self.positionKey(endpoint.name)
        let replaced = try WebhookError.store { () throws(StoreError) in
            try meta.replaceMetaValue(key, with: value, ifCurrent: progress.stored)
        }
        guard replaced else {
            // Another process delivered meanwhile: start over from what it stored.
            progress.position = nil
            throw WebhookError("another process moved the position; reading it again")
        }
        progress.stored = value
        progress.position = cursor
        progress.unsaved = false
        state.withLock { $0.position = value }
    }

    /// Reads the next batch after the position. - Returns: false when there is none yet.
    private func read(_ progress: inout Progress) throws(WebhookError) -> Bool {
        guard let position = progress.position else { return false }
        let page: FeedPage
        do {
            page = try sessions.feed(from: progress.fromOldest ? .oldest : .after(position), limit: timing.batchSize, form: .analytics)
        } catch let error where error.code == .cursorExpired {
            skipExpired(&progress, because: "position \(position) expired before its records were delivered")
            return false
        } catch let error where error.code == .invalidRequest {
            // A position this store never handed out (a memory store's meta kept elsewhere, a
            // database restored from before it): start at the newest record, as a new endpoint does.
            logger.error(
                "webhook position unknown to the store; starting at the newest record",
                metadata: ["endpoint": "\(endpoint.name)", "position": "\(position)"])
            let newest = try WebhookError.service { () throws(ServiceError) in
                try sessions.feed(from: .since(.max), limit: 1, form: .analytics).next
            }
            try save(&progress, to: newest)
            return false
        } catch {
            throw WebhookError(error.detail)
        }
        progress.fromOldest = false
        var entries: [(entry: FeedEntry, graph: String)] = []
        for entry in page.entries {
            let graph = WebhookBatch.graphName(of: entry) ?? ""
            if let wanted = endpoint.graph, graph != wanted { continue }
            entries.append((entry, graph))
        }
        guard let batch = WebhookBatch(entries, next: page.next) else {
            // Only other graphs' records, or none: moved past, saved when nothing else is due.
            if page.next != position {
                progress.position = page.next
                progress.unsaved = true
            }
            state.withLock { $0.waitingSince = nil }
            return false
        }
        progress.batch = batch
        state.withLock { $0.waitingSince = batch.oldestTime }
        progress.attempts = 0
        progress.backoff = timing.backoff
        return true
    }

    /// The position expired (its records were swept while they could not be delivered): go on
    /// from the oldest record retained, and say so.
    private func skipExpired(_ progress: inout Progress, because reason: String) {
        progress.batch = nil
        progress.fromOldest = true
        state.withLock {
            $0.skipped += 1
            $0.waitingSince = nil
        }
        logger.error(
            "webhook records lost: skipping to the oldest retained",
            metadata: ["endpoint": "\(endpoint.name)", "cause": "\(reason)"])
    }

    /// Sends the batch once; on a 2xx moves the position past it, else waits before the next try.
    private func attempt(_ progress: inout Progress) throws(WebhookError) {
        // Stopping: no new post (one already under way is let finish, see stop()).
        guard var batch = progress.batch, !stopped.load(ordering: .relaxed) else { return }
        if progress.attempts > 0 {
            // Retried only while its records are retained.
            let floor = try WebhookError.store { () throws(StoreError) in try sessions.store.feedFloor() }
            if batch.first <= floor {
                skipExpired(&progress, because: "batch \(batch.id) expired before the receiver took it")
                return
            }
        }
        let time = now()
        let timestamp = time / 1000
        let headers = [
            ("Content-Type", WebhookBatch.contentType), ("webhook-id", batch.id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", WebhookSignature.header(id: batch.id, timestamp: timestamp, body: batch.body, secrets: endpoint.secrets))
        ]
        let outcome = poster.post(endpoint.url, headers: headers, body: batch.body)
        progress.attempts += 1
        guard case .status(let code) = outcome, (200...299).contains(code) else {
            if stopped.load(ordering: .relaxed) { return }
            let (message, rejected) =
                switch outcome {
                case .status(let code): ("HTTP \(code)", (400...499).contains(code))
                case .failure(let text): (text, false)
                }
            state.withLock {
                $0.lastAttempt = time
                $0.lastError = message
                if rejected { $0.rejected += 1 } else { $0.failed += 1 }
            }
            note(message, &progress)
            pause(progress.backoff)
            progress.backoff = min(progress.backoff * 2, timing.maxBackoff)
            return
        }
        state.withLock {
            $0.lastAttempt = time
            $0.lastError = nil
            $0.acknowledged += 1
            $0.delivered += batch.ids.count
            $0.waitingSince = nil
        }
        if progress.logged != nil {
            logger.notice("webhook delivering again", metadata: ["endpoint": "\(endpoint.name)"])
            progress.logged = nil
        }
        progress.batch = nil
        batch.body = []
        try save(&progress, to: batch.next)
    }

    /// Logs a failure, once per change of error (not on every retry). Errors that differ only in
    /// their numbers are one error: libcurl's words carry the milliseconds waited ("timed out after
    /// 10001 milliseconds"), which differ from one try to the next; an HTTP status is one error
    /// per status.
    private func note(_ message: String, _ progress: inout Progress) {
        let error = message.hasPrefix("HTTP ") ? message : String(message.filter { !$0.isNumber })
        guard progress.logged != error else { return }
        progress.logged = error
        logger.warning("webhook delivery failed", metadata: ["endpoint": "\(endpoint.name)", "cause": "\(message)"])
    }

    /// Waits `duration`, or until stopped.
    private func pause(_ duration: Duration) {
        guard !stopped.load(ordering: .relaxed) else { return }
        _ = wake.wait(timeout: .now() + .milliseconds(Int(duration.milliseconds)))
        if stopped.load(ordering: .relaxed) { wake.signal() }
    }
}

/// Why a round of delivery failed before anything was sent: the store could not be read or written.
struct WebhookError: Error {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    static func store<T>(_ body: () throws(StoreError) -> T) throws(WebhookError) -> T {
        do {
            return try body()
        } catch {
            throw WebhookError("the store failed: \(error.message)")
        }
    }

    static func service<T>(_ body: () throws(ServiceError) -> T) throws(WebhookError) -> T {
        do {
            return try body()
        } catch {
            throw WebhookError(error.detail)
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
