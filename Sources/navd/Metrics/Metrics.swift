import Synchronization

/// Counters and latency histograms in the Prometheus text format, served at `/metrics`.
///
/// Labels are route templates and status codes, never raw paths or session ids, so the
/// number of series stays bounded whatever clients send.
final class Metrics: Sendable {
    private struct RequestKey: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private struct Histogram {
        var buckets: [Int]
        var count = 0
        var sum = 0.0
    }

    static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var durations: [String: Histogram] = [:]
        var transitions: [String: Int] = [:]
    }

    private let state = Mutex(State())

    private static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    func recordRequest(method rawMethod: String, route: String, status: Int, seconds: Double) {
        // A client chooses the method token: anything unusual counts as one label.
        let method = Self.methods.contains(rawMethod) ? rawMethod : "other"
        state.withLock { state in
            state.requests[RequestKey(method: method, route: route, status: status), default: 0] += 1
            var histogram = state.durations[route] ?? Histogram(buckets: Array(repeating: 0, count: Self.bounds.count))
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { histogram.buckets[index] += 1 }
            histogram.count += 1
            histogram.sum += seconds
            state.durations[route] = histogram
        }
    }

    /// Counts an intent's outcome: `applied`, `noop`, or a refusal code.
    func recordTransition(_ result: String) {
        state.withLock { $0.transitions[result, default: 0] += 1 }
    }

    func exposition(sessions: Int?) -> String {
        state.withLock { state in
            var text = "# HELP navd_http_requests_total HTTP requests answered.\n# TYPE navd_http_requests_total counter\n"
            for (key, count) in state.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
                text += "navd_http_requests_total{method=\"\(key.method)\",route=\"\(key.route)\",status=\"\(key.status)\"} \(count)\n"
            }
            text += "# HELP navd_http_request_duration_seconds Time to answer a request.\n# TYPE navd_http_request_duration_seconds histogram\n"
            for (route, histogram) in state.durations.sorted(by: { $0.key < $1.key }) {
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
            return text
        }
    }
}
