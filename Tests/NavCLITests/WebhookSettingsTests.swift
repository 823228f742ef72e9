import Foundation
import Logging
import Testing

@testable import NavCLI
@testable import NavTestSupport

/// `--webhook` and its secrets: where a secret may come from, rotation, and a clear refusal
/// (exit 64, naming the endpoint) of an endpoint without one or of a malformed value.
@Suite struct WebhookSettingsTests {
    static func settings(_ arguments: [String], environment: [String: String] = [:]) throws -> ServeSettings {
        try ServeSettings(try ServeCommand.parse(arguments), environment: environment)
    }

    @Test func secretsComeFromTheFlagTheEnvironmentAndAFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("navd-secret-\(UUID().uuidString.prefix(8))")
        try "from-a-file\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let settings = try Self.settings(
            [
                "--webhook", "orders-eu=https://hooks.example.com/navd", "--webhook-secret",
                "orders-eu=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "--webhook-secret-file", "orders-eu=\(file.path)", "--webhook-graph", "orders-eu=news"
            ],
            environment: ["NAVD_WEBHOOK_SECRET_ORDERS_EU": "from-the-environment"])
        let endpoint = try #require(settings.webhooks.first)
        #expect(endpoint.name == "orders-eu")
        #expect(endpoint.url == "https://hooks.example.com/navd")
        #expect(endpoint.graph == "news")
        #expect(
            endpoint.secrets == [
                Array(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") ?? Data()), Array("from-a-file".utf8),
                Array("from-the-environment".utf8)
            ])
    }

    @Test(arguments: [
        (["--webhook", "orders=https://hooks.example.com/"], "--webhook orders has no secret"),
        (["--webhook", "Orders=https://hooks.example.com/", "--webhook-secret", "Orders=s"], "the endpoint name must be"),
        (["--webhook", "orders=ftp://hooks.example.com/", "--webhook-secret", "orders=s"], "must be http:// or https://"),
        (["--webhook", "orders"], "--webhook must be NAME=URL"),
        (["--webhook-secret", "other=s"], "no --webhook is named other"),
        (["--webhook", "orders=http://h/", "--webhook-secret", "orders=whsec_!!"], "base64"),
        (["--webhook", "orders=http://h/", "--webhook-secret", "orders=s", "--feed-retention", "0"], "--feed-retention 0")
    ])
    func badValuesAreRefusedClearly(_ arguments: [String], _ message: String) {
        #expect {
            try Self.settings(arguments)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// A graph may be uploaded after navd starts, so an endpoint's graph that is not loaded is no
    /// refusal; but a mistyped name would leave the endpoint silent for good, so it is logged.
    @Test func anEndpointWhoseGraphIsNotLoadedIsWarnedOf() throws {
        let collected = LogBackendTests.Collected()
        let logger = Logger(label: "navd") { _ in LogBackendTests.CollectingHandler(collected: collected) }
        let settings = try Self.settings([
            "--store", "memory", "--graph", DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json").path,
            "--webhook", "orders=http://127.0.0.1:9/", "--webhook-secret", "orders=s", "--webhook-graph", "orders=nwes",
            "--webhook", "audit=http://127.0.0.1:9/", "--webhook-secret", "audit=s", "--webhook-graph", "audit=news"
        ])
        let (_, store) = try Daemon.application(for: settings, logger: logger)
        defer { store.close() }
        let warnings = collected.records.withLock { $0 }.filter { $0.level == .warning && $0.metadata["webhook"] != nil }
        #expect(warnings.map { $0.metadata["webhook"] } == ["orders"])
        #expect(warnings.first?.metadata["graph"] == "nwes")
    }

    /// The binary exits 64 (EX_USAGE), naming the endpoint that lacks a secret.
    @Test func anEndpointWithoutASecretExits64() throws {
        let run = try CLIProcess.navd(["serve", "--store", "memory", "--webhook", "orders=https://hooks.example.com/"])
        #expect(run.status == 64)
        #expect(run.errors.contains("--webhook orders has no secret"))
    }
}
