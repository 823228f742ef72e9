import NavHTTP
import NavJSON
import NavSessions
import NavWebhooks

/// `GET /v1/webhooks` (admin): each configured endpoint's delivery, as this process sees it
/// (docs/design.md, "Webhooks").
struct WebhookRoutes: Sendable {
    let webhooks: Webhooks
    let adminToken: TokenDigest?

    func register(in router: inout Routes) {
        router.on("GET", "/v1/webhooks") { context in
            try Admin.require(context, adminToken: adminToken)
            return .json(bytes: Self.json(webhooks.statuses))
        }
    }

    /// `{"webhooks": [{"name", "position", "lagSeconds", "delivered", "lastAttemptAt", "lastError", "leaseHeld"}]}`.
    static func json(_ statuses: [WebhookDeliverer.Status]) -> [UInt8] {
        let items = statuses.map { status -> JSONValue in
            .object([
                "name": .string(status.name),
                "position": status.position.map(JSONValue.string) ?? .null,
                "lagSeconds": .double((status.lagSeconds * 1000).rounded() / 1000),
                "delivered": .int(status.delivered),
                "lastAttemptAt": status.lastAttempt.map { .string(Timestamp.text(milliseconds: $0)) } ?? .null,
                "lastError": status.lastError.map(JSONValue.string) ?? .null,
                "leaseHeld": .bool(status.leaseHeld)
            ])
        }
        return JSONValue.object(["webhooks": .array(items)]).jsonBytes
    }
}
