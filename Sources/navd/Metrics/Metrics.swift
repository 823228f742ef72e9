import NavServer
import Synchronization

/// Counters and latency histograms in the Prometheus text format, served at `/metrics`.
///
/// Labels are route templates and status codes, never raw paths or session ids, so the
/// number of series stays bounded whatever clients send.
final class Metrics: Sendable {
    private struct Histogram {
        var buckets = [Int](repeating: 0, count: Metrics.bounds.count)
        var count = 0
        var sum = 0.0

        mutating func record(_ seconds: Double) {
            for (index, bound) in Metrics.bounds.enumerated() where seconds <= bound { buckets[index] += 1 }
            count += 1
            sum += seconds
        }
    }

    static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// Series are keyed by numbers (a route's index, a method's index, a status), named only
    /// when exposed: a request hashes one integer instead of three strings.
    private struct State {
        /// Route templates by index, from the frozen route table.
        var routes: [String] = []
        /// Request counts by ``Metrics/key(route:method:status:)``.
        var requests: [Int: Int] = [:]
        /// For each route index, the slot of its template's histogram (routes that differ
        /// only in method share one): the first route index with that template, plus 1.
        var histogramSlots: [Int] = []
        /// Durations by histogram slot (0: no route matched).
        var durations: [Histogram] = []
        var transitions: [String: Int] = [:]
    }

    private let state = Mutex(State())

    /// Method labels; anything a client invents counts as the last, `other`.
    private static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"]

    /// Names the routes that ``recordRequest(method:route:status:seconds:)`` gets by index.
    func name(routes: [String]) {
        state.withLock { state in
            state.routes = routes
            state.histogramSlots = routes.map { template in (routes.firstIndex(of: template) ?? 0) + 1 }
        }
    }

    /// Counts a request; `route` is the matched route's index, `nil` when none matched.
    func recordRequest(method rawMethod: String, route: Int?, status: Int, seconds: Double) {
        // A client chooses the method token: anything unusual counts as one label.
        let method = Self.methods.firstIndex(of: rawMethod) ?? Self.methods.count - 1
        let slot = (route ?? -1) + 1
        let key = Self.key(route: slot, method: method, status: status)
        state.withLock { state in
            state.requests[key, default: 0] += 1
            let histogram = slot > 0 && slot <= state.histogramSlots.count ? state.histogramSlots[slot - 1] : 0
            while state.durations.count <= histogram { state.durations.append(Histogram()) }
            state.durations[histogram].record(seconds)
        }
    }

    private static func key(route slot: Int, method: Int, status: Int) -> Int {
        (slot << 16) | (method << 10) | (status & 0x3FF)
    }

    /// The route label of a slot: its template, or `unmatched`.
    private static func routeName(_ slot: Int, _ routes: [String]) -> String {
        slot > 0 && slot <= routes.count ? routes[slot - 1] : "unmatched"
    }

    /// Counts an intent's outcome: `applied`, `noop`, or a refusal code.
    func recordTransition(_ result: String) {
        state.withLock { $0.transitions[result, default: 0] += 1 }
    }

    func exposition(sessions: Int?, live: LiveSessions? = nil) -> String {
        state.withLock { state in
            var text = "# HELP navd_http_requests_total HTTP requests answered.\n# TYPE navd_http_requests_total counter\n"
            let requests = state.requests.map { key, count in
                (route: Self.routeName(key >> 16, state.routes), method: Self.methods[(key >> 10) & 0x3F], status: key & 0x3FF, count: count)
            }
            for series in requests.sorted(by: { ($0.route, $0.method, $0.status) < ($1.route, $1.method, $1.status) }) {
                text += "navd_http_requests_total{method=\"\(series.method)\",route=\"\(series.route)\",status=\"\(series.status)\"} \(series.count)\n"
            }
            text += "# HELP navd_http_request_duration_seconds Time to answer a request.\n# TYPE navd_http_request_duration_seconds histogram\n"
            let durations = state.durations.enumerated().filter { $0.element.count > 0 }.map { (route: Self.routeName($0.offset, state.routes), histogram: $0.element) }
            for (route, histogram) in durations.sorted(by: { $0.route < $1.route }) {
                for (index, bound) in Self.bounds.enumerated() {
                    text += "navd_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"\(bound)\"} \(histogram.buckets[index])\n"
                }
                text += "navd_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"+Inf\"} \(histogram.count)\n"
                text += "navd_http_request_duration_seconds_sum{route=\"\(route)\"} \(histogram.sum)\n"
                text += "navd_http_request_duration_seconds_count{route=\"\(route)\"} \(histogram.count)\n"
            }
            text += "# HELP navd_intents_total Session intents by outcome.\n# TYPE navd_intents_total counter\n"
            for (result, count) in state.transitions.sorted(by: { $0.key < $1.key }) {
                text += "navd_intents_total{result=\"\(result)\"} \(count)\n"
            }
            if let sessions {
                text += "# HELP navd_sessions Sessions in the store.\n# TYPE navd_sessions gauge\nnavd_sessions \(sessions)\n"
            }
            if let live {
                text += "# HELP navd_watchers Event streams and long polls following a session now.\n# TYPE navd_watchers gauge\nnavd_watchers \(live.count)\n"
                text += "# HELP navd_watcher_messages_total Messages sent on event streams (view, lifecycle, end; not heartbeats).\n# TYPE navd_watcher_messages_total counter\n"
                text += "navd_watcher_messages_total \(live.messagesSent.load(ordering: .relaxed))\n"
                text += "# HELP navd_watchers_dropped_total Event streams ended because their client did not keep up.\n# TYPE navd_watchers_dropped_total counter\n"
                text += "navd_watchers_dropped_total \(live.watchersDropped.load(ordering: .relaxed))\n"
            }
            return text
        }
    }
}
