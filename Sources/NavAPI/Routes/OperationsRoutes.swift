import NavCore
import NavHTTP
import NavSessions
import NavWebhooks
import Synchronization

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`.
struct OperationsRoutes: Sendable {
    let metrics: Metrics
    let sessions: SessionService
    /// False once shutdown has begun or while the store cannot be reached: load balancers stop
    /// sending new traffic.
    let ready: Readiness
    /// The daemon-wide budgets, for `navd_budget_used` and `navd_budget_limit`.
    let budgets: Budgets
    /// The webhook endpoints, for `navd_webhook_deliveries_total` and `navd_webhook_lag_seconds`.
    let webhooks: Webhooks

    func register(in router: inout Routes) {
        router.on("GET", "/healthz") { _ in .json(["status": "ok"]) }
        router.on("GET", "/readyz") { _ in
            guard ready.isReady else { return .json(["status": "draining"], status: 503) }
            // A store that cannot take work (a full disk, PostgreSQL down) takes this instance out
            // of rotation until it can again (SessionStore.isAvailable, probed at most once a second).
            guard ready.storeIsReachable else {
                return .json(["status": "store_unavailable"], status: 503, headers: [("Retry-After", "1")])
            }
            return .json(["status": "ready"])
        }
        router.on("GET", "/metrics") { _ in
            sessions.releaseEventBytes()
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                body: Array(
                    (metrics.exposition(
                        store: sessions.store.statistics(), live: sessions.live, budgets: budgets, answersEvicted: sessions.answers.evicted,
                        feed: sessions.feedStatistics()
                    ) + Metrics.exposition(of: webhooks.statuses)).utf8)
            )
        }
        router.on("GET", "/openapi.yaml") { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: PackageResources.openapi_yaml)
        }
    }
}
