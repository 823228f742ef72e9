import Foundation
import Logging
import NavSessions
import NavWebhooks
import Testing

@testable import NavCLI
@testable import NavStorePostgres
@testable import NavTestSupport

/// Two processes sharing a PostgreSQL store, each configured with the same endpoint (two
/// deliverers whose positions and leases are in two stores on one database): only the lease's
/// holder delivers, and when it stops the other takes over from the position it stored.
@Suite(.needsPostgres) struct PostgresWebhookLeaseTests {
    @Test func oneProcessDeliversAndAnotherTakesOverWhereItStopped() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let graphs = try TestFixtures.graphs()
        let stores = try (0..<2).map { _ in
            try PostgresStore(url: cluster.url, connections: 2, decode: StoreFactory.snapshotDecoder(graphs))
        }
        defer { for store in stores { store.close() } }
        // The feed itself is the in-process daemon's (memory): what is shared here is the meta values.
        let navd = try InProcessHarness(arguments: ["--admin-token", "webhook-admin-token-0123456789"])
        let secret = Array("lease-test-secret".utf8)
        let receiver = try WebhookReceiver(secrets: [secret])
        var timing = WebhookDeliverer.Timing()
        timing.poll = .milliseconds(50)
        let deliverers = stores.enumerated().map { index, store in
            WebhookDeliverer(
                endpoint: WebhookEndpoint(name: "orders", url: receiver.url, secrets: [secret]), sessions: navd.application.sessions,
                meta: store, owner: "process-\(index)", logger: Logger(label: "webhooks"), timing: timing)
        }
        deliverers[0].start()
        let deadline = Date().addingTimeInterval(10)
        while !(deliverers[0].status.leaseHeld && deliverers[0].status.position != nil), Date() < deadline { usleep(20_000) }
        try #require(deliverers[0].status.leaseHeld)
        deliverers[1].start()
        defer { deliverers[1].stop() }
        usleep(300_000)
        #expect(!deliverers[1].status.leaseHeld)
        #expect(try stores[1].metaValue("webhook-lease:orders")?.hasPrefix("process-0 ") == true)

        func change() throws {
            let session = try navd.createSession()
            _ = try navd.navigate(session, "list_news")
        }
        func feedIDs() throws -> [String] {
            try navd.application.sessions.feed(from: .oldest, limit: 1000, form: .analytics).entries.map(\.id)
        }
        for _ in 0..<3 { try change() }
        let before = try feedIDs()
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.count >= before.count })
        deliverers[0].stop()
        for _ in 0..<3 { try change() }
        let all = try feedIDs()
        // Given up on stopping, the lease is taken at the other's next renewal (every 5 s).
        #expect(receiver.wait(seconds: 15) { $0.uniqueIDs.count >= all.count })
        #expect(receiver.uniqueIDs == all)
        #expect(deliverers[1].status.leaseHeld)
        #expect(receiver.deliveries.flatMap(\.ids).count == all.count)
        #expect(try stores[0].metaValue("webhook:orders") == deliverers[1].status.position)
    }
}
