import Logging
import Synchronization
import Testing

@testable import NavCLI
@testable import NavHTTP
@testable import NavSessions
@testable import NavTestSupport

/// navd's records reach any swift-log backend (`runNavd(logHandler:)`): request lines included,
/// with their fields as metadata, since the fast path to navd's own sink is taken only for its own
/// handler.
@Suite struct LogBackendTests {
    final class Collected: Sendable {
        let records = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
    }

    struct CollectingHandler: LogHandler {
        let collected: Collected
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            collected.records.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
        }
    }

    @Test func anotherBackendGetsEveryRecordWithStructuredFields() throws {
        let collected = Collected()
        let logger = Logger(label: "navd") { _ in CollectingHandler(collected: collected) }
        #expect(Daemon.accessLog(for: logger) == nil)
        let settings = try ServeSettings(
            try ServeCommand.parse([
                "--store", "memory", "--graph", DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json").path
            ]), environment: [:])
        let (application, store) = try Daemon.application(for: settings, logger: logger, accessLog: Daemon.accessLog(for: logger))
        defer { store.close() }
        _ = application.handle(HTTPRequest(method: "GET", path: "/healthz", headers: ["X-Request-Id": "backend-1"]))
        _ = application.handle(HTTPRequest(method: "PUT", path: "/healthz", headers: ["X-Request-Id": "backend-2"]))
        let records = collected.records.withLock { $0 }
        #expect(records.contains { $0.message == "graph loaded" && $0.metadata["graph"] == "news" })
        let requests = records.filter { $0.message == "request" }
        #expect(requests.count == 2)
        #expect(requests.first?.metadata["route"] == "/healthz")
        #expect(requests.first?.metadata["status"] == "200")
        #expect(requests.first?.metadata["request_id"] == "backend-1")
        #expect(requests.last?.metadata["status"] == "405")
        #expect(requests.last?.metadata["method"] == "PUT")
    }
}
