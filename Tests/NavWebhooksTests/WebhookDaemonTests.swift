import Foundation
import NavJSON
import Testing

@testable import NavTestSupport

/// Webhooks as an operator runs them: `navd serve --webhook …` on a SQLite file, killed with
/// `kill -9` and started again on it (docs/design.md, "Webhooks"). The endpoint's position is in
/// the store, so the restarted daemon goes on from it: every record of the feed arrives, signed,
/// and a record sent before the crash is sent again only if its batch was not acknowledged.
@Suite struct WebhookDaemonTests {
    static let secret = "a-secret-only-the-receiver-knows"
    static let admin = "admin-token-for-webhook-tests"

    static func daemon(_ store: String, _ receiver: WebhookReceiver) throws -> DaemonHarness {
        try DaemonHarness(
            store: store,
            arguments: ["--admin-token", admin, "--webhook", "hook=\(receiver.url)", "--webhook-secret", "hook=\(secret)"])
    }

    /// The feed's ids, oldest first, paged with `next`.
    static func feedIDs(_ daemon: DaemonHarness) throws -> [String] {
        var ids: [String] = []
        var target = "/v1/feed?limit=1000"
        while true {
            let page = try daemon.send("GET", target, token: admin).json()
            let records = page["records"]?.array ?? []
            ids += records.compactMap { $0["id"]?.string }
            guard !records.isEmpty, let next = page["next"]?.string else { return ids }
            target = "/v1/feed?limit=1000&after=\(next)"
        }
    }

    /// Waits until the endpoint has stored a position (a new endpoint starts at the newest record),
    /// or the position `cursor` when given: stored only after the receiver's 2xx, so from then on
    /// a crash re-sends none of what it acknowledged.
    static func waitForPosition(_ daemon: DaemonHarness, _ cursor: String? = nil) throws -> Bool {
        for _ in 0..<200 {
            let answer = try daemon.send("GET", "/v1/webhooks", token: admin).json()
            let position = answer["webhooks"]?.array?.first?["position"]?.string
            if position != nil, cursor == nil || position == cursor { return true }
            usleep(50_000)
        }
        return false
    }

    /// The feed's newest cursor.
    static func newestCursor(_ daemon: DaemonHarness) throws -> String? {
        try daemon.send("GET", "/v1/feed?since=9999-12-31T00:00:00Z", token: admin).json()["next"]?.string
    }

    static func changes(_ daemon: DaemonHarness, sessions: Int) throws {
        for index in 0..<sessions {
            let session = try daemon.createSession()
            #expect(try daemon.navigate(session, "list_news").status == 200)
            #expect(try daemon.navigate(session, "show_news(id=\(index))").status == 200)
        }
    }

    @Test(.timeLimit(.minutes(2))) func aDaemonKilledAndRestartedOnItsSQLiteFileDeliversEveryRecord() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        let receiver = try WebhookReceiver(secrets: [Array(Self.secret.utf8)])
        var daemon = try Self.daemon(store, receiver)
        try #require(try Self.waitForPosition(daemon), "\(daemon.log)")
        try Self.changes(daemon, sessions: 4)
        let before = try Self.feedIDs(daemon)
        #expect(before.count == 12)
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.count >= before.count }, "\(daemon.log)")
        #expect(try Self.waitForPosition(daemon, try Self.newestCursor(daemon)), "\(daemon.log)")

        daemon.crash()
        daemon = try Self.daemon(store, receiver)
        try Self.changes(daemon, sessions: 3)
        let all = try Self.feedIDs(daemon)
        #expect(all.count == 21)
        #expect(receiver.wait(seconds: 10) { $0.uniqueIDs.count >= all.count }, "\(daemon.log)")
        #expect(receiver.uniqueIDs == all)
        #expect(receiver.deliveries.allSatisfy { $0.signatureValid })
        // Everything before the crash had been acknowledged and its position stored: none of it came again.
        #expect(receiver.deliveries.flatMap(\.ids).count == all.count)
        let status = try daemon.send("GET", "/v1/webhooks", token: Self.admin).json()["webhooks"]?.array?.first
        #expect(status?["leaseHeld"]?.bool == true)
        #expect(status?["lastError"] == .null)
        #expect(try daemon.stop() == 0)
    }
}
