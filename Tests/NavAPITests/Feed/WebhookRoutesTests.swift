import Foundation
import Testing

@testable import NavTestSupport

/// `GET /v1/webhooks` and the webhook metrics against the binary, with a receiver in the test:
/// what an operator sees of a healthy endpoint and of one whose receiver refuses the signature.
@Suite(.serialized) struct WebhookRoutesTests {
    static let admin = "webhook-admin-token-0123456789"
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    static func start(_ receiver: WebhookReceiver, secret: String = secret) throws -> DaemonHarness {
        try DaemonHarness(arguments: [
            "--admin-token", admin, "--webhook", "orders=\(receiver.url)", "--webhook-secret", "orders=\(secret)"
        ])
    }

    static func webhooks(_ navd: DaemonHarness) throws -> JSON {
        let answer = try navd.request("GET", "/v1/webhooks", headers: ["Authorization": "Bearer \(admin)"])
        try #require(answer.status == 200, "\(answer)")
        return try #require(try answer.json()["webhooks"]?[0])
    }

    /// Polls `GET /v1/webhooks` until `condition` holds of the endpoint (at most 10 s).
    static func waitFor(_ navd: DaemonHarness, _ condition: (JSON) -> Bool) throws -> JSON {
        let deadline = Date().addingTimeInterval(10)
        var endpoint = try webhooks(navd)
        while !condition(endpoint), Date() < deadline {
            usleep(50_000)
            endpoint = try webhooks(navd)
        }
        return endpoint
    }

    @Test func aHealthyEndpointShowsItsPositionAndDeliveries() throws {
        let receiver = try WebhookReceiver(secrets: [Array(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") ?? Data())])
        let navd = try Self.start(receiver)
        #expect(try navd.request("GET", "/v1/webhooks").status == 401)
        var endpoint = try Self.waitFor(navd) { $0["leaseHeld"]?.bool == true && $0["position"]?.string != nil }
        #expect(endpoint["name"]?.string == "orders")
        let session = try navd.createSession()
        _ = try navd.navigate(session, "list_news")
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.count == 2 })
        #expect(receiver.uniqueIDs == ["\(session.id):1", "\(session.id):2"])
        endpoint = try Self.waitFor(navd) { $0["delivered"]?.int == 2 }
        #expect(endpoint["delivered"]?.int == 2)
        #expect(endpoint["lastError"] == .null)
        #expect(endpoint["lagSeconds"] == .int(0) || endpoint["lagSeconds"] == .double(0))
        #expect(endpoint["lastAttemptAt"]?.string != nil)
        let metrics = try navd.request("GET", "/metrics").text
        #expect(metrics.contains("navd_webhook_deliveries_total{endpoint=\"orders\",outcome=\"delivered\"} 1"))
        #expect(metrics.contains("navd_webhook_lag_seconds{endpoint=\"orders\"} 0"))
        #expect(!metrics.contains(receiver.url))
        #expect(try navd.stop() == 0)
    }

    /// A receiver that refuses the signature (navd has another secret): the last error says so,
    /// the log tells it once, the metrics count it as rejected, and nothing is marked delivered.
    @Test func aRejectedSignatureShowsAsTheLastErrorAndInTheLog() throws {
        let receiver = try WebhookReceiver(secrets: [Array("the-receivers-own-secret".utf8)])
        let navd = try Self.start(receiver, secret: "not-the-receivers-secret")
        _ = try Self.waitFor(navd) { $0["leaseHeld"]?.bool == true && $0["position"]?.string != nil }
        let session = try navd.createSession()
        _ = try navd.navigate(session, "list_news")
        let endpoint = try Self.waitFor(navd) { $0["lastError"]?.string != nil }
        #expect(endpoint["lastError"]?.string == "HTTP 401")
        #expect(endpoint["delivered"]?.int == 0)
        #expect(receiver.uniqueIDs.isEmpty)
        // Retried (1 s, then 2 s) without a new log line for the same error.
        #expect(receiver.wait(seconds: 8) { $0.deliveries.count >= 3 })
        let metrics = try navd.request("GET", "/metrics").text
        #expect(metrics.contains("navd_webhook_deliveries_total{endpoint=\"orders\",outcome=\"rejected\"}"))
        #expect(try navd.stop() == 0)
        let failures = navd.log.split(separator: "\n").filter { $0.contains("webhook delivery failed") }
        #expect(failures.count == 1, "\(failures)")
        #expect(failures.first?.contains("endpoint=orders") == true)
        #expect(failures.first?.contains("HTTP 401") == true)
    }
}
