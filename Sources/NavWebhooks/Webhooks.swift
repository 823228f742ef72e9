import Dispatch
import Logging
import NavSessions
import Synchronization

/// The daemon's webhook endpoints: their deliverers, started and stopped together, and what
/// `GET /v1/webhooks` and `/metrics` show of them. Empty when none is configured.
package final class Webhooks: Sendable {
    private let deliverers = Mutex<[WebhookDeliverer]>([])

    package init() {}

    /// Starts delivering to `endpoints` from `sessions`' feed. `owner` names this process in the
    /// endpoints' leases.
    package func start(
        _ endpoints: [WebhookEndpoint], sessions: SessionService, owner: String, logger: Logger,
        timing: WebhookDeliverer.Timing = WebhookDeliverer.Timing()
    ) {
        let started = endpoints.map { endpoint in
            WebhookDeliverer(endpoint: endpoint, sessions: sessions, owner: owner, logger: logger, timing: timing)
        }
        for deliverer in started { deliverer.start() }
        deliverers.withLock { $0 += started }
    }

    /// Stops every deliverer (leases given up; posts in progress answered or cut short), all at
    /// once: each may wait for its post's answer (``WebhookDeliverer/stop()``), and one endpoint's
    /// slow receiver must not add to another's wait.
    package func stop() {
        let all = deliverers.withLock { all in
            defer { all = [] }
            return all
        }
        let stopped = DispatchGroup()
        for deliverer in all {
            // A queue of its own each: a stop blocks its thread until the deliverer's has ended.
            DispatchQueue(label: "navd.webhook.stop").async(group: stopped) { deliverer.stop() }
        }
        stopped.wait()
    }

    /// Each endpoint's status, in the order configured.
    package var statuses: [WebhookDeliverer.Status] {
        deliverers.withLock { $0 }.map(\.status)
    }
}
