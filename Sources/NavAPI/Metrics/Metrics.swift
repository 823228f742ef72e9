import NavSessions
import NavWebhooks
import NavWire
import Synchronization

/// Counters and latency histograms in the Prometheus text format, served at `/metrics`.
///
/// Labels are route templates, methods and status codes, never raw paths or session ids, so the
/// number of series stays bounded whatever clients send.
///
/// A request costs three relaxed atomic additions (its counter, its latency bucket, the latency
/// sum) in tables laid out when the routes are named, and no lock: series are numbered (a route
/// template's slot, a method's index, a status's index) and named only when exposed.
final class Metrics: Sendable {
    static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// Method labels; anything a client invents counts as the last, `other`.
    static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"]

    /// The statuses counted without a lock: every status navd answers, and a few more; any other
    /// is counted under a lock (``rareStatuses``).
    static let statuses = [
        200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 406, 408, 409, 410, 411, 412, 413, 414,
        415, 416, 422, 428, 429, 431, 500, 501, 502, 503, 504
    ]
    /// Status → its index in ``statuses``, or -1.
    private static let statusIndex: [Int8] = {
        var table = [Int8](repeating: -1, count: 600)
        for (index, status) in statuses.enumerated() { table[status] = Int8(index) }
        return table
    }()

    /// Route templates a daemon may have, plus the `unmatched` slot 0.
    static let templateCapacity = 64

    /// How an intent ended: `navd_intents_total{result}`.
    enum IntentResult: Int, CaseIterable {
        /// Answered 2xx: applied, or a no-op.
        case applied
        /// Navigation said no: the transition, the target, the params, the version (403, 409, 412, 422).
        case refused
        /// The request itself was wrong: its body, media type or size (400, 413, 415).
        case invalid
        /// No or a wrong token, or one that may not do this (401, 403 `forbidden`).
        case unauthorized
        /// No such session or screen (404).
        case notFound
        /// The store could not take it (503).
        case unavailable
        /// An internal error (500).
        case failed

        var label: String {
            switch self {
            case .applied: "applied"
            case .refused: "refused"
            case .invalid: "invalid"
            case .unauthorized: "unauthorized"
            case .notFound: "not_found"
            case .unavailable: "unavailable"
            case .failed: "failed"
            }
        }
    }

    private let requests = AtomicCounters(count: Metrics.templateCapacity * Metrics.methods.count * Metrics.statuses.count)
    /// Per (template slot, method): one count per bucket (not cumulative) and one past the last.
    private let buckets = AtomicCounters(count: Metrics.templateCapacity * Metrics.methods.count * (Metrics.bounds.count + 1))
    /// Per (template slot, method): the sum of latencies, in nanoseconds.
    private let sums = AtomicCounters(count: Metrics.templateCapacity * Metrics.methods.count)
    private let intents = AtomicCounters(count: IntentResult.allCases.count)
    /// Requests answered with a status not in ``statuses``, by (slot, method, status).
    private let rareStatuses = Mutex<[Int: Int]>([:])
    /// Template names by slot (slot 0 is `unmatched`).
    private let templates = Mutex<[String]>(["unmatched"])

    /// Names the routes of a frozen route table.
    /// - Returns: for each route index, its template's slot, which ``recordRequest(method:slot:status:seconds:)``
    ///   takes (routes that differ only in method share one); 0 for a template beyond ``templateCapacity``.
    func name(routes: [String]) -> [Int] {
        templates.withLock { names in
            names = ["unmatched"]
            return routes.map { template in
                if let slot = names.firstIndex(of: template) { return slot }
                guard names.count < Self.templateCapacity else { return 0 }
                names.append(template)
                return names.count - 1
            }
        }
    }

    /// Counts a request; `slot` is its route template's (0 when no route matched).
    func recordRequest(method rawMethod: String, slot: Int, status: Int, seconds: Double) {
        let method = Self.methodIndex(rawMethod)
        let slot = slot >= 0 && slot < Self.templateCapacity ? slot : 0
        let series = slot * Self.methods.count + method
        let statusIndex = status >= 0 && status < 600 ? Int(Self.statusIndex[status]) : -1
        if statusIndex >= 0 {
            requests.add(series * Self.statuses.count + statusIndex)
        } else {
            rareStatuses.withLock { $0[(series << 16) | (status & 0xFFFF), default: 0] += 1 }
        }
        var bucket = Self.bounds.count
        for (index, bound) in Self.bounds.enumerated() where seconds <= bound {
            bucket = index
            break
        }
        buckets.add(series * (Self.bounds.count + 1) + bucket)
        let nanoseconds = (max(0, seconds) * 1e9).rounded()
        sums.add(series, nanoseconds < 1e15 ? Int(nanoseconds) : 1_000_000_000_000_000)
    }

    /// Counts an intent's outcome.
    func recordIntent(_ result: IntentResult) {
        intents.add(result.rawValue)
    }

    /// A method's label index: the known methods, else `other`. (Compared as bytes: the common
    /// methods are short ASCII strings.)
    private static func methodIndex(_ method: String) -> Int {
        switch method {
        case "GET": 0
        case "HEAD": 1
        case "POST": 2
        case "PUT": 3
        case "PATCH": 4
        case "DELETE": 5
        case "OPTIONS": 6
        default: 7
        }
    }

    /// The exposition of every metric: HTTP, intents, the store's, the watchers', the process's
    /// and the build's.
    func exposition(
        store: StoreStatistics?, live: LiveSessions? = nil, budgets: Budgets? = nil, answersEvicted: Int? = nil,
        feed: FeedStatistics? = nil, process: ProcessStatistics = .current()
    ) -> String {
        let names = templates.withLock { $0 }
        func route(_ slot: Int) -> String { slot < names.count ? names[slot] : "unmatched" }
        var text = ""
        text.reserveCapacity(16 * 1024)

        text += "# HELP navd_http_requests_total HTTP requests answered.\n# TYPE navd_http_requests_total counter\n"
        var counted: [(route: String, method: String, status: Int, count: Int)] = []
        for slot in 0..<names.count {
            for method in Self.methods.indices {
                let series = slot * Self.methods.count + method
                for (index, status) in Self.statuses.enumerated() {
                    let count = requests.load(series * Self.statuses.count + index)
                    if count > 0 { counted.append((route(slot), Self.methods[method], status, count)) }
                }
            }
        }
        for (key, count) in rareStatuses.withLock({ $0 }) {
            let series = key >> 16
            counted.append((route(series / Self.methods.count), Self.methods[series % Self.methods.count], key & 0xFFFF, count))
        }
        for series in counted.sorted(by: { ($0.route, $0.method, $0.status) < ($1.route, $1.method, $1.status) }) {
            text +=
                "navd_http_requests_total{method=\"\(series.method)\",route=\"\(Self.escaped(series.route))\",status=\"\(series.status)\"} \(series.count)\n"
        }

        text += "# HELP navd_http_request_duration_seconds Time to answer a request.\n# TYPE navd_http_request_duration_seconds histogram\n"
        var histograms: [(route: String, method: String, series: Int)] = []
        for slot in 0..<names.count {
            for method in Self.methods.indices {
                let series = slot * Self.methods.count + method
                let total = (0...Self.bounds.count).reduce(0) { $0 + buckets.load(series * (Self.bounds.count + 1) + $1) }
                if total > 0 { histograms.append((route(slot), Self.methods[method], series)) }
            }
        }
        for (routeName, method, series) in histograms.sorted(by: { ($0.route, $0.method) < ($1.route, $1.method) }) {
            let labels = "method=\"\(method)\",route=\"\(Self.escaped(routeName))\""
            var cumulative = 0
            for (index, bound) in Self.bounds.enumerated() {
                cumulative += buckets.load(series * (Self.bounds.count + 1) + index)
                text += "navd_http_request_duration_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += buckets.load(series * (Self.bounds.count + 1) + Self.bounds.count)
            text += "navd_http_request_duration_seconds_bucket{\(labels),le=\"+Inf\"} \(cumulative)\n"
            text += "navd_http_request_duration_seconds_sum{\(labels)} \(Double(sums.load(series)) / 1e9)\n"
            text += "navd_http_request_duration_seconds_count{\(labels)} \(cumulative)\n"
        }

        text +=
            "# HELP navd_intents_total Session intents (every change asked of a session: navigate, transitions, exit, back, params, state, context, commands, batches, confirmations, upgrades) by result: applied (2xx, no-ops included), refused (by navigation), invalid, unauthorized, not_found, unavailable, failed.\n# TYPE navd_intents_total counter\n"
        for result in IntentResult.allCases.sorted(by: { $0.label < $1.label }) {
            text += "navd_intents_total{result=\"\(result.label)\"} \(intents.load(result.rawValue))\n"
        }

        if let store { text += Self.exposition(of: store) }
        if let live {
            text +=
                "# HELP navd_watchers Event streams and long polls following a session now.\n# TYPE navd_watchers gauge\nnavd_watchers \(live.count)\n"
            text +=
                "# HELP navd_watcher_messages_total Messages sent on event streams (view, lifecycle, end; not heartbeats).\n# TYPE navd_watcher_messages_total counter\n"
            text += "navd_watcher_messages_total \(live.messagesSent.load(ordering: .relaxed))\n"
            text +=
                "# HELP navd_watchers_dropped_total Event streams ended because their client did not keep up.\n# TYPE navd_watchers_dropped_total counter\n"
            text += "navd_watchers_dropped_total \(live.watchersDropped.load(ordering: .relaxed))\n"
        }
        if let budgets {
            var all = budgets.all.map { (resource: $0.resource, used: $0.used, limit: $0.limit) }
            if let feed, let limit = feed.maxBytes { all.append(("feed_bytes", feed.bytes, limit)) }
            text += Self.exposition(of: all)
        }
        if let feed { text += Self.exposition(of: feed) }
        if let answersEvicted {
            text +=
                "# HELP navd_idempotency_evicted_total Answers kept under an Idempotency-Key forgotten to make room for newer ones.\n# TYPE navd_idempotency_evicted_total counter\n"
            text += "navd_idempotency_evicted_total \(answersEvicted)\n"
        }
        text += process.exposition
        text += "# HELP navd_build_info The navd build: its version and the Swift it was built with.\n# TYPE navd_build_info gauge\n"
        text += "navd_build_info{swift=\"\(BuildInfo.swift)\",version=\"\(Self.escaped(NavdVersion.text))\"} 1\n"
        return text
    }

    /// Each daemon-wide budget's use and limit, labelled by its resource.
    private static func exposition(of budgets: [(resource: String, used: Int, limit: Int)]) -> String {
        guard !budgets.isEmpty else { return "" }
        var text =
            "# HELP navd_budget_used What clients make navd hold now, by resource (docs/operations.md, \"Budgets\").\n# TYPE navd_budget_used gauge\n"
        for budget in budgets { text += "navd_budget_used{resource=\"\(escaped(budget.resource))\"} \(budget.used)\n" }
        text +=
            "# HELP navd_budget_limit The most navd holds of each resource at once (its --max-* flag).\n# TYPE navd_budget_limit gauge\n"
        for budget in budgets { text += "navd_budget_limit{resource=\"\(escaped(budget.resource))\"} \(budget.limit)\n" }
        return text
    }

    /// What the feed's records counted (docs/design.md, "Counts"): labels are graphs, scenes and
    /// kinds, bounded by the graphs loaded, never pairs of scenes.
    private static func exposition(of feed: FeedStatistics) -> String {
        var text =
            "# HELP navd_screen_views_total Changes that put another screen on top (creation included), by graph and scene.\n# TYPE navd_screen_views_total counter\n"
        for (pair, count) in feed.views.sorted(by: { ($0.key.graph, $0.key.label) < ($1.key.graph, $1.key.label) }) {
            text += "navd_screen_views_total{graph=\"\(escaped(pair.graph))\",scene=\"\(escaped(pair.label))\"} \(count)\n"
        }
        text +=
            "# HELP navd_transitions_total Applied changes by graph and kind, as their feed records say.\n# TYPE navd_transitions_total counter\n"
        for (pair, count) in feed.changes.sorted(by: { ($0.key.graph, $0.key.label) < ($1.key.graph, $1.key.label) }) {
            text += "navd_transitions_total{graph=\"\(escaped(pair.graph))\",kind=\"\(escaped(pair.label))\"} \(count)\n"
        }
        text += "# HELP navd_feed_records_total Feed records written by this process.\n# TYPE navd_feed_records_total counter\n"
        text += "navd_feed_records_total \(feed.records)\n"
        text += "# HELP navd_feed_retained_records Feed records the store keeps now.\n# TYPE navd_feed_retained_records gauge\n"
        text += "navd_feed_retained_records \(feed.retained)\n"
        return text
    }

    /// Each webhook endpoint's delivery attempts by outcome and its lag, labelled with the
    /// operator's name for it (never its URL, which may carry a credential). Empty without endpoints.
    static func exposition(of webhooks: [WebhookDeliverer.Status]) -> String {
        guard !webhooks.isEmpty else { return "" }
        var text =
            "# HELP navd_webhook_deliveries_total Batches sent to each webhook endpoint by outcome: delivered (2xx), rejected (4xx), failed (any other answer, or none within 10 s).\n# TYPE navd_webhook_deliveries_total counter\n"
        for status in webhooks {
            let endpoint = escaped(status.name)
            for (outcome, count) in [("delivered", status.acknowledged), ("failed", status.failed), ("rejected", status.rejected)] {
                text += "navd_webhook_deliveries_total{endpoint=\"\(endpoint)\",outcome=\"\(outcome)\"} \(count)\n"
            }
        }
        text +=
            "# HELP navd_webhook_lag_seconds Seconds since the oldest record not yet delivered to each webhook endpoint was written; 0 when none waits.\n# TYPE navd_webhook_lag_seconds gauge\n"
        for status in webhooks { text += "navd_webhook_lag_seconds{endpoint=\"\(escaped(status.name))\"} \(status.lagSeconds)\n" }
        text +=
            "# HELP navd_webhook_records_delivered_total Records each webhook endpoint acknowledged.\n# TYPE navd_webhook_records_delivered_total counter\n"
        for status in webhooks {
            text += "navd_webhook_records_delivered_total{endpoint=\"\(escaped(status.name))\"} \(status.delivered)\n"
        }
        text +=
            "# HELP navd_webhook_expired_total Times records expired before a webhook endpoint took them, so delivery skipped to the oldest retained.\n# TYPE navd_webhook_expired_total counter\n"
        for status in webhooks { text += "navd_webhook_expired_total{endpoint=\"\(escaped(status.name))\"} \(status.skipped)\n" }
        return text
    }

    private static func exposition(of store: StoreStatistics) -> String {
        var text = ""
        func gauge(_ name: String, _ help: String, _ value: Int?) {
            guard let value else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        func counter(_ name: String, _ help: String, _ value: Int?) {
            guard let value else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        func seconds(_ name: String, _ help: String, _ nanoseconds: Int?) {
            guard let nanoseconds else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(Double(nanoseconds) / 1e9)\n"
        }
        gauge(
            "navd_sessions",
            store.sessionsCached
                ? "Sessions in the store (PostgreSQL: counted at most every \(StoreStatistics.sessionCountSeconds) seconds)."
                : "Sessions in the store.", store.sessions)
        gauge(
            "navd_store_changelog_backlog", "Changes in the SQLite change log not yet compacted into the database.", store.changeLogBacklog)
        counter("navd_store_compactions_total", "Change-log generations compacted into the SQLite database.", store.compactions)
        seconds(
            "navd_store_compaction_seconds_total", "Time spent compacting the change log into the SQLite database.",
            store.compactionNanoseconds)
        gauge(
            "navd_store_cache_bytes", "Estimated memory of the decoded sessions the SQLite store keeps (--cache-size bounds it).",
            store.cacheBytes)
        gauge("navd_store_cache_limit_bytes", "The bound of the decoded-session cache (--cache-size).", store.cacheLimitBytes)
        gauge("navd_store_cache_sessions", "Decoded sessions the SQLite store keeps.", store.cacheSessions)
        counter("navd_store_cache_hits_total", "Session reads answered from the decoded-session cache.", store.cacheHits)
        counter(
            "navd_store_cache_misses_total", "Session reads that went to the database (hit rate: hits / (hits + misses)).",
            store.cacheMisses)
        gauge("navd_store_pool_connections", "Connections of the PostgreSQL pool (--pg-connections).", store.poolConnections)
        counter("navd_store_pool_waits_total", "Times a request found no free PostgreSQL connection and waited for one.", store.poolWaits)
        seconds(
            "navd_store_pool_wait_seconds_total", "Time requests spent waiting for a free PostgreSQL connection.", store.poolWaitNanoseconds
        )
        counter(
            "navd_store_pool_timeouts_total", "Times no PostgreSQL connection came free within 10 s (answered 503).", store.poolTimeouts)
        counter("navd_store_group_commits_total", "PostgreSQL transactions that committed a group of changes.", store.groupCommits)
        counter("navd_store_group_changes_total", "Changes committed in those groups (per group: changes / commits).", store.groupChanges)
        return text
    }

    /// A label value as the text format needs it: `\`, `"` and newlines escaped.
    private static func escaped(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }) else {
            return value
        }
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }
}

/// What navd was built with, for `navd_build_info`.
enum BuildInfo {
    static var swift: String {
        #if compiler(>=6.4)
            "6.4+"
        #elseif compiler(>=6.3)
            "6.3"
        #elseif compiler(>=6.2)
            "6.2"
        #else
            "older"
        #endif
    }
}

/// A fixed number of counters, each an atomic, added to without a lock.
///
/// `@unchecked Sendable`: the pointer is allocated and initialised in `init`, never reassigned,
/// and released in `deinit`; every access in between goes through an `Atomic`.
final class AtomicCounters: @unchecked Sendable {
    private let base: UnsafeMutablePointer<Atomic<Int>>
    let count: Int

    init(count: Int) {
        self.count = count
        base = .allocate(capacity: count)
        for index in 0..<count { (base + index).initialize(to: Atomic(0)) }
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    func add(_ index: Int, _ amount: Int = 1) {
        guard index >= 0, index < count else { return }
        base[index].wrappingAdd(amount, ordering: .relaxed)
    }

    func load(_ index: Int) -> Int {
        guard index >= 0, index < count else { return 0 }
        return base[index].load(ordering: .relaxed)
    }
}
