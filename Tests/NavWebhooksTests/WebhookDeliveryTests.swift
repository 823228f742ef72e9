import Foundation
import Logging
import NavSessions
import NavStoreSQLite
import NavWebhooks
import Synchronization
import Testing

@testable import NavCLI
@testable import NavTestSupport

/// Delivery of the feed to receivers the test runs: every record once after deduplication by
/// `id`, each request signed with every secret, retried through failures, hangs and dropped
/// connections without slowing navigation, and resumed after a restart from the position kept
/// in the store.
@Suite(.serialized) struct WebhookDeliveryTests {
    static let secret = Array("a-secret-only-the-receiver-knows".utf8)
    static let newSecret = Array("the-secret-rotated-in".utf8)

    /// An in-process daemon with the feed on (memory store).
    static func daemon() throws -> InProcessHarness {
        try InProcessHarness(arguments: ["--admin-token", "webhook-admin-token-0123456789"])
    }

    /// Waits (5 s at most) until `deliverer` has counted `count` records delivered: a receiver
    /// counts a batch before its answer reaches the deliverer, whose status changes only then.
    static func answered(_ deliverer: WebhookDeliverer, delivered count: Int) {
        let deadline = Date().addingTimeInterval(5)
        while deliverer.status.delivered < count, Date() < deadline { usleep(20_000) }
    }

    static func deliverer(
        _ navd: InProcessHarness, _ receiver: WebhookReceiver, secrets: [[UInt8]], meta: (any MetaStore)? = nil, name: String = "hook",
        graph: String? = nil, backoff: Duration = .seconds(1)
    ) -> WebhookDeliverer {
        var timing = WebhookDeliverer.Timing()
        timing.poll = .milliseconds(50)
        timing.backoff = backoff
        return WebhookDeliverer(
            endpoint: WebhookEndpoint(name: name, url: receiver.url, secrets: secrets, graph: graph), sessions: navd.application.sessions,
            meta: meta, owner: "test-\(UUID().uuidString.prefix(8))", logger: Logger(label: "webhooks"), timing: timing)
    }

    /// Waits until the deliverer holds its lease and has read its position.
    static func waitUntilReady(_ deliverer: WebhookDeliverer) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let status = deliverer.status
            if status.leaseHeld, status.position != nil { return true }
            usleep(20_000)
        }
        return false
    }

    /// Every record id in the feed, oldest first.
    static func feedIDs(_ navd: InProcessHarness) throws -> [String] {
        var ids: [String] = []
        var start = FeedStart.oldest
        while true {
            let page = try navd.application.sessions.feed(from: start, limit: 1000, form: .analytics)
            ids += page.entries.map(\.id)
            if page.entries.isEmpty { return ids }
            start = .after(page.next)
        }
    }

    /// ``changes(_:sessions:)``, then waits up to `seconds` for the receiver to hold every record
    /// of the feed. - Returns: the feed's ids, and whether they all arrived in time.
    static func changesDelivered(
        _ navd: InProcessHarness, to receiver: WebhookReceiver, sessions: Int, within seconds: Double = 10
    ) throws -> (ids: [String], arrived: Bool) {
        try changes(navd, sessions: sessions)
        let ids = try feedIDs(navd)
        return (ids, receiver.wait(seconds: seconds) { $0.uniqueIDs.count >= ids.count })
    }

    /// A few sessions, each with a few changes, and one ended.
    static func changes(_ navd: InProcessHarness, sessions: Int = 5) throws {
        for index in 0..<sessions {
            let session = try navd.createSession()
            _ = try navd.navigate(session, "list_news")
            _ = try navd.navigate(session, "show_news(id=\(index))")
            _ = try navd.back(session)
            if index == 0 { _ = try navd.request("DELETE", session.url, headers: ["Authorization": "Bearer \(session.token)"]) }
        }
    }

    @Test func everyRecordArrivesOnceSignedWithEverySecretAsCloudEvents() throws {
        let navd = try Self.daemon()
        let receiver = try WebhookReceiver(secrets: [Self.secret, Self.newSecret])
        let deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret, Self.newSecret])
        deliverer.start()
        defer { deliverer.stop() }
        try #require(Self.waitUntilReady(deliverer))
        try Self.changes(navd, sessions: 8)
        let expected = try Self.feedIDs(navd)
        #expect(expected.count > 30)
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.count >= expected.count })
        #expect(receiver.uniqueIDs == expected)
        let deliveries = receiver.deliveries
        #expect(!deliveries.isEmpty)
        for delivery in deliveries {
            #expect(delivery.signatureValid, "signature of \(delivery.webhookID)")
            #expect(delivery.signatures == 2)
            #expect(delivery.contentType == "application/cloudevents-batch+json")
            #expect(delivery.ids.count <= 100)
            #expect(delivery.webhookID == delivery.events.last?["data"]?["cursor"]?.string)
        }
        let event = try #require(deliveries.first?.events.first)
        #expect(event["specversion"]?.string == "1.0")
        #expect(event["type"]?.string == "dev.navd.navigation.changed")
        #expect(event["source"]?.string == "navd/news")
        #expect(event["datacontenttype"]?.string == "application/json")
        #expect(event["dataschema"]?.string == "urn:navd:feed-record:1")
        #expect(event["id"]?.string == event["data"]?["id"]?.string)
        #expect(event["subject"]?.string == event["data"]?["session"]?.string)
        #expect(event["time"]?.string == event["data"]?["time"]?.string)
        #expect(event["data"]?["form"]?.string == "analytics")
        Self.answered(deliverer, delivered: expected.count)
        let status = deliverer.status
        #expect(status.delivered == expected.count)
        #expect(status.lastError == nil)
        #expect(status.lagSeconds == 0)
    }

    /// 500, then no answer past the 10 s time-out, then a dropped connection, then 200: every
    /// record arrives, the retries resend the same batch under the same id, and navigation
    /// answers as fast as ever meanwhile.
    @Test(.timeLimit(.minutes(1))) func failuresHangsAndDropsAreRetriedUntilEverythingArrives() throws {
        let navd = try Self.daemon()
        let receiver = try WebhookReceiver(secrets: [Self.secret]) { index in
            switch index {
            case 0: .answer(500)
            case 1: .hang(12)
            case 2: .close
            default: .answer(200)
            }
        }
        let deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret])
        deliverer.start()
        defer { deliverer.stop() }
        try #require(Self.waitUntilReady(deliverer))
        try Self.changes(navd, sessions: 2)
        // Navigation goes on while the receiver fails and hangs.
        #expect(receiver.wait(seconds: 5) { $0.deliveries.count >= 2 })
        var slowest = 0.0
        for _ in 0..<20 {
            let started = Date()
            try Self.changes(navd, sessions: 1)
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(slowest < 1, "a round of changes took \(slowest) s while the receiver hung")
        #expect(deliverer.status.lastError != nil)
        let expected = try Self.feedIDs(navd)
        #expect(receiver.wait(seconds: 40) { $0.uniqueIDs.count >= expected.count })
        #expect(receiver.uniqueIDs == expected)
        let deliveries = receiver.deliveries
        // The first four attempts were one batch: the same id and records each time.
        try #require(deliveries.count >= 4)
        #expect(Set(deliveries[0..<4].map(\.webhookID)).count == 1)
        #expect(Set(deliveries[0..<4].map(\.ids)).count == 1)
        #expect(deliveries.allSatisfy { $0.signatureValid })
        Self.answered(deliverer, delivered: expected.count)
        #expect(deliverer.status.lastError == nil)
        #expect(deliverer.status.failed == 3)
    }

    /// The lag grows while the receiver fails, between attempts too: it is the age of the oldest
    /// record not delivered, worked out when it is read, not when an attempt last failed (a 30 s
    /// back-off and a 10 s time-out would leave it up to 40 s behind, on the gauge operators
    /// alert on).
    @Test func theLagGrowsBetweenAttempts() throws {
        let navd = try Self.daemon()
        let receiver = try WebhookReceiver(secrets: [Self.secret]) { _ in .answer(500) }
        let deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret], backoff: .seconds(30))
        deliverer.start()
        defer { deliverer.stop() }
        try #require(Self.waitUntilReady(deliverer))
        try Self.changes(navd, sessions: 1)
        let deadline = Date().addingTimeInterval(5)
        while deliverer.status.lastError == nil, Date() < deadline { usleep(20_000) }
        #expect(deliverer.status.lastError == "HTTP 500")
        let first = deliverer.status.lagSeconds
        usleep(1_200_000)
        let later = deliverer.status
        #expect(later.failed == 1, "no second attempt within the back-off")
        #expect(later.lagSeconds >= first + 1, "lag \(first) s, then \(later.lagSeconds) s")
    }

    /// A receiver that refuses every signature: each attempt is rejected, nothing is marked
    /// delivered, and the status says why.
    @Test func aRejectedSignatureIsTheLastErrorAndNothingAdvances() throws {
        let navd = try Self.daemon()
        let receiver = try WebhookReceiver(secrets: [Self.secret])
        let deliverer = Self.deliverer(navd, receiver, secrets: [Array("not-the-receivers-secret".utf8)])
        deliverer.start()
        defer { deliverer.stop() }
        try #require(Self.waitUntilReady(deliverer))
        let before = deliverer.status.position
        try Self.changes(navd, sessions: 1)
        #expect(receiver.wait(seconds: 5) { !$0.deliveries.isEmpty })
        #expect(receiver.uniqueIDs.isEmpty)
        let deadline = Date().addingTimeInterval(5)
        while deliverer.status.lastError == nil, Date() < deadline { usleep(20_000) }
        let status = deliverer.status
        #expect(status.lastError == "HTTP 401")
        #expect(status.rejected >= 1)
        #expect(status.delivered == 0)
        #expect(status.position == before)
        #expect(status.lagSeconds >= 0)
    }

    /// Only the graph it names, with `--webhook-graph`.
    @Test func aGraphFilterSendsThatGraphOnly() throws {
        let navd = try InProcessHarness(
            graphs: ["Examples/news.json", "Examples/stopwatch.json"], arguments: ["--admin-token", "webhook-admin-token-0123456789"])
        let receiver = try WebhookReceiver(secrets: [Self.secret])
        let deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret], graph: "stopwatch")
        deliverer.start()
        defer { deliverer.stop() }
        try #require(Self.waitUntilReady(deliverer))
        _ = try navd.createSession(graph: "news")
        let stopwatch = try navd.createSession(graph: "stopwatch")
        _ = try navd.createSession(graph: "news")
        #expect(receiver.wait(seconds: 5) { !$0.uniqueIDs.isEmpty })
        // The news records after it are passed over too, not sent.
        usleep(300_000)
        #expect(receiver.uniqueIDs == ["\(stopwatch.id):1"])
    }

    /// A deliverer stopped and started again on a store reopened from its file goes on from the
    /// position it stored: nothing is lost, and nothing delivered before is sent again.
    @Test func aRestartResumesFromThePositionKeptInTheStore() throws {
        let navd = try Self.daemon()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("navd-webhooks-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.path + "/navd.db"
        let receiver = try WebhookReceiver(secrets: [Self.secret])

        var store = try SQLiteStore(path: path, decode: StoreFactory.snapshotDecoder(GraphRegistry()))
        var deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret], meta: store)
        deliverer.start()
        try #require(Self.waitUntilReady(deliverer))
        #expect(try Self.changesDelivered(navd, to: receiver, sessions: 3).arrived)
        deliverer.stop()
        store.close()

        // Written while no deliverer ran.
        try Self.changes(navd, sessions: 3)
        let all = try Self.feedIDs(navd)
        store = try SQLiteStore(path: path, decode: StoreFactory.snapshotDecoder(GraphRegistry()))
        defer { store.close() }
        #expect(try store.metaValue(WebhookDeliverer.positionKey("hook")) != nil)
        deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret], meta: store)
        deliverer.start()
        defer { deliverer.stop() }
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.count >= all.count })
        #expect(receiver.uniqueIDs == all)
        // Stopped between batches: no record was sent twice.
        let sent = receiver.deliveries.flatMap(\.ids)
        #expect(sent.count == all.count)
    }

    /// Two deliverers of one endpoint on one store: one holds the lease and delivers, the other
    /// waits; when the holder stops, the other takes over where it left off.
    @Test func oneDelivererPerEndpointAcrossProcessesSharingAStore() throws {
        let navd = try Self.daemon()
        let receiver = try WebhookReceiver(secrets: [Self.secret])
        let first = Self.deliverer(navd, receiver, secrets: [Self.secret])
        first.start()
        try #require(Self.waitUntilReady(first))
        let second = Self.deliverer(navd, receiver, secrets: [Self.secret])
        second.start()
        defer { second.stop() }
        usleep(300_000)
        #expect(!second.status.leaseHeld)
        #expect(try Self.changesDelivered(navd, to: receiver, sessions: 2).arrived)
        first.stop()
        // The lease given up on stopping is taken at the other's next renewal (5 s).
        let (all, arrived) = try Self.changesDelivered(navd, to: receiver, sessions: 2, within: 15)
        #expect(arrived)
        #expect(receiver.uniqueIDs == all)
        #expect(second.status.leaseHeld)
        #expect(receiver.deliveries.flatMap(\.ids).count == all.count)
    }

    /// Stopped while the receiver has taken a batch but not yet answered: the answer is waited
    /// for, so the batch is acknowledged here and whoever delivers next does not send it again.
    @Test func aBatchTheReceiverTookWhileStoppingIsNotSentAgain() throws {
        let navd = try Self.daemon()
        let receiver = try WebhookReceiver(secrets: [Self.secret]) { index in index == 0 ? .answerAfter(200, 1.2) : .answer(200) }
        let first = Self.deliverer(navd, receiver, secrets: [Self.secret])
        first.start()
        try #require(Self.waitUntilReady(first))
        let (all, arrived) = try Self.changesDelivered(navd, to: receiver, sessions: 1)
        #expect(arrived)
        // The answer is still 1.2 s away: less than the grace stop() gives it.
        first.stop()
        #expect(first.status.delivered == all.count)

        let second = Self.deliverer(navd, receiver, secrets: [Self.secret])
        second.start()
        defer { second.stop() }
        try #require(Self.waitUntilReady(second))
        let (more, delivered) = try Self.changesDelivered(navd, to: receiver, sessions: 1)
        #expect(delivered)
        #expect(receiver.uniqueIDs == more)
        #expect(receiver.deliveries.flatMap(\.ids).count == more.count)
    }

    /// Records swept (`--feed-retention`) while the receiver could not take them: delivery skips
    /// to the oldest record retained, counts the loss and logs it, and goes on.
    @Test func recordsThatExpiredWhileTheReceiverWasDownAreSkippedAndCounted() throws {
        let navd = try InProcessHarness(arguments: ["--admin-token", "webhook-admin-token-0123456789", "--feed-retention", "1s"])
        let down = Atomic<Bool>(true)
        let receiver = try WebhookReceiver(secrets: [Self.secret]) { _ in down.load(ordering: .relaxed) ? .answer(503) : .answer(200) }
        let deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret])
        deliverer.start()
        defer { deliverer.stop() }
        try #require(Self.waitUntilReady(deliverer))
        try Self.changes(navd, sessions: 1)
        #expect(receiver.wait(seconds: 5) { !$0.deliveries.isEmpty })
        usleep(1_200_000)
        #expect(try navd.application.sessions.sweep() >= 0)
        #expect(try Self.feedIDs(navd).isEmpty)
        down.store(false, ordering: .relaxed)
        let deadline = Date().addingTimeInterval(10)
        while deliverer.status.skipped == 0, Date() < deadline { usleep(20_000) }
        #expect(deliverer.status.skipped == 1)
        let session = try navd.createSession()
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.contains("\(session.id):1") })
        Self.answered(deliverer, delivered: 1)
        #expect(deliverer.status.lastError == nil)
    }

    /// A stored position the feed never handed out (a database restored from before it was
    /// stored, say): delivery goes on from the newest record instead of failing on every round.
    @Test func aPositionTheFeedNeverGaveStartsAtTheNewestRecord() throws {
        let navd = try Self.daemon()
        try Self.changes(navd, sessions: 1)
        let store = navd.application.sessions.store
        #expect(try store.replaceMetaValue(WebhookDeliverer.positionKey("hook"), with: "999999", ifCurrent: nil))
        let receiver = try WebhookReceiver(secrets: [Self.secret])
        let deliverer = Self.deliverer(navd, receiver, secrets: [Self.secret])
        deliverer.start()
        defer { deliverer.stop() }
        let deadline = Date().addingTimeInterval(10)
        while deliverer.status.position == "999999" || deliverer.status.position == nil, Date() < deadline { usleep(20_000) }
        let session = try navd.createSession()
        #expect(receiver.wait(seconds: 5) { $0.uniqueIDs.contains("\(session.id):1") })
        #expect(receiver.uniqueIDs == ["\(session.id):1"])
        Self.answered(deliverer, delivered: 1)
        #expect(deliverer.status.lastError == nil)
    }

    @Test func secretsAndNames() {
        #expect(
            WebhookEndpoint.secretBytes("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
                == Array(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") ?? Data()))
        #expect(WebhookEndpoint.secretBytes("plain") == Array("plain".utf8))
        #expect(WebhookEndpoint.secretBytes("whsec_not base64") == nil)
        #expect(WebhookEndpoint.secretVariable(for: "orders-eu_1") == "NAVD_WEBHOOK_SECRET_ORDERS_EU_1")
        #expect(WebhookEndpoint.isValidName("orders-eu_1"))
        #expect(!WebhookEndpoint.isValidName("Orders"))
        #expect(!WebhookEndpoint.isValidName(String(repeating: "a", count: 65)))
        #expect(WebhookEndpoint.isValidURL("https://hooks.example.com/navd"))
        #expect(!WebhookEndpoint.isValidURL("ftp://hooks.example.com/"))
        #expect(!WebhookEndpoint.isValidURL("https:///path"))
    }

    /// The example of the Standard Webhooks specification's test vectors.
    @Test func signaturesMatchTheSpecificationsExample() {
        let secret = WebhookEndpoint.secretBytes("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") ?? []
        let header = WebhookSignature.header(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Array(#"{"test": 2432232314}"#.utf8), secrets: [secret])
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }
}
