import ArgumentParser
import Dispatch
import Logging
import NavAPI
import NavCore
import NavSessions
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `navd serve`: the daemon.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the navigation API over HTTP.",
        discussion: "Every option can also be set by its NAVD_ environment variable (e.g. NAVD_LISTEN); the option wins."
    )

    @Option(
        name: .customLong("graph"),
        help:
            "A graph file to load (.json, .yaml); repeat for several. The first is the default graph. (NAVD_GRAPH, comma-separated; default: none)"
    )
    var graphs: [String] = []

    @Option(
        help:
            "HOST:PORT to listen on: an IPv4 address, [IPV6], a host name, or :PORT for every IPv4 interface ([::]:PORT: every interface). (NAVD_LISTEN; default 127.0.0.1:8080)"
    )
    var listen: String?

    @Option(
        help:
            "memory, sqlite:PATH[?sync=full][&compact=N][&check=off] or postgres://user@host:port/db. (NAVD_STORE; default sqlite:./.navd/navd.db)"
    )
    var store: String?

    @Option(
        help:
            "Token for admin routes (graph upload, session listing); at least 16 characters. (NAVD_ADMIN_TOKEN; default: none, admin routes answer 403)"
    )
    var adminToken: String?

    @Option(
        help:
            "Token that creating a session needs (the admin token works too); the production setting. At least 16 characters. (NAVD_BACKEND_TOKEN; default: none, anyone may create)"
    )
    var backendToken: String?

    @Option(
        help:
            "Largest session context in bytes of JSON: bytes, or with K, M; a larger one is 400 invalid_request. (NAVD_MAX_CONTEXT; default 4K)"
    )
    var maxContext: String?

    @Option(help: "HTTP worker threads. (NAVD_THREADS; default: the cores navd may use, its cgroup's CPU quota included)")
    var threads: Int?

    @Option(
        name: .customLong("pg-connections"),
        help: "Connections of the PostgreSQL store's pool (not counting its one listener). (NAVD_PG_CONNECTIONS; default 4)")
    var pgConnections: Int?

    @Option(
        help:
            "Largest request body: bytes, or with K, M (KiB, MiB), at most 64M; a larger one is 413 payload_too_large. (NAVD_MAX_BODY; default 64K)"
    )
    var maxBody: String?

    @Option(
        help:
            "Memory all loaded graph versions may take together, by estimate: bytes, or with K, M, G (KiB, MiB, GiB); an upload past it is refused (503) until a version is removed. (NAVD_MAX_GRAPH_MEMORY; default 512M)"
    )
    var maxGraphMemory: String?

    @Option(
        help:
            "Heavy jobs (drawing a diagram, validating an upload, replaying more than 64 changes to rebuild a past version) run at once; more are refused (503). (NAVD_MAX_GRAPH_WORK; default: --threads minus one, at least 1, so that one HTTP thread is always free of them)"
    )
    var maxGraphWork: Int?

    @Option(help: "Most sessions held at once. (NAVD_MAX_SESSIONS; default 100000)")
    var maxSessions: Int?

    @Option(
        help:
            "Most bytes all sessions may take together: their snapshots' bytes (SQLite, PostgreSQL) or their decoded states' memory by estimate (memory store), with their retained events; bytes, or with K, M, G. A create or change that would pass it is 503 over_capacity with Retry-After and writes nothing; changes that add nothing are never refused. (NAVD_MAX_SESSION_BYTES; default 1G)"
    )
    var maxSessionBytes: String?

    @Option(
        help:
            "Most bytes one session's answers kept under an Idempotency-Key may take (memory and store alike): bytes, or with K, M, G. Past it the session's oldest answers are forgotten first, never one younger than 60 s: then a keyed request is 429 too_many_requests with Retry-After. (NAVD_MAX_IDEMPOTENCY_BYTES_PER_SESSION; default 1M)"
    )
    var maxIdempotencyBytesPerSession: String?

    @Option(
        help:
            "Most bytes all answers kept under an Idempotency-Key may take (memory and store alike): bytes, or with K, M, G. Past it the oldest answers of any session are forgotten, never one younger than 60 s: then a keyed request is 503 over_capacity with Retry-After; unkeyed requests are never refused by it. (NAVD_MAX_IDEMPOTENCY_BYTES; default 64M)"
    )
    var maxIdempotencyBytes: String?

    @Option(
        help:
            "Memory for decoded sessions kept by the SQLite store, by estimate: bytes, or with K, M, G (KiB, MiB, GiB); at least 1M. (NAVD_CACHE_SIZE; default 256M)"
    )
    var cacheSize: String?

    @Option(help: "Idle time after which a session expires: 90s, 30m, 24h, 7d. (NAVD_SESSION_TTL; default 24h)")
    var sessionTTL: String?

    @Option(
        help:
            "A context key whose value each feed record carries in its attributes (repeatable): every other context value stays out of the analytics form. (NAVD_FEED_ATTRIBUTE, comma-separated; default: none)"
    )
    var feedAttribute: [String] = []

    @Option(
        help:
            "How long the feed keeps a change's record (90s, 30m, 24h, 7d); 0 writes no records, and GET /v1/feed answers 404. (NAVD_FEED_RETENTION; default 7d)"
    )
    var feedRetention: String?

    @Option(
        help:
            "Most bytes all feed records together may take in the store: bytes, or with K, M, G; past it the oldest go first. (NAVD_MAX_FEED_BYTES; default 256M)"
    )
    var maxFeedBytes: String?

    @Option(
        name: .customLong("webhook"),
        help:
            "An endpoint the feed's analytics form is delivered to, as NAME=URL (http or https; NAME of a-z, 0-9, _ and -, at most 64); repeat for several. Each needs a secret. (NAVD_WEBHOOK, comma-separated; default: none)"
    )
    var webhooks: [String] = []

    @Option(
        name: .customLong("webhook-secret"),
        help:
            "NAME=SECRET: a secret endpoint NAME's batches are signed with (whsec_<base64> is those bytes, any other its UTF-8 bytes); repeat while rotating, and each signs. Also NAVD_WEBHOOK_SECRET_<NAME> (NAME upper-cased, other characters as _). (default: none)"
    )
    var webhookSecrets: [String] = []

    @Option(
        name: .customLong("webhook-secret-file"),
        help: "NAME=FILE: endpoint NAME's secret read from FILE (a trailing newline is not part of it). (default: none)")
    var webhookSecretFiles: [String] = []

    @Option(
        name: .customLong("webhook-graph"),
        help: "NAME=GRAPH: endpoint NAME gets the records of graph GRAPH only. (default: every graph's)")
    var webhookGraphs: [String] = []

    @Option(
        help:
            "Most concurrent connections; navd raises its open-file limit to fit them when it can. Event streams and long polls together may hold at most half of them (past that: 503 over_capacity), so ordinary requests always find room. (NAVD_MAX_CONNECTIONS; default 8192)"
    )
    var maxConnections: Int?

    @Option(
        help:
            "Most event streams and long polls following one session at once; one more answers 429 too_many_requests with Retry-After. (NAVD_MAX_WATCHERS_PER_SESSION; default 16)"
    )
    var maxWatchersPerSession: Int?

    @Option(
        help:
            "Most bytes buffered for all event streams together, for clients that read slower than changes come: bytes, or with K, M, G (KiB, MiB, GiB); at least 64K. When reached, the stream holding the most is dropped (it ends with reason lagging). (NAVD_MAX_WATCHER_BUFFER; default 64M)"
    )
    var maxWatcherBuffer: String?

    @Option(help: "Seconds before an idle or slow connection is dropped. (NAVD_CONNECTION_TIMEOUT; default 30)")
    var connectionTimeout: Int?

    @Option(
        help:
            "Seconds a request has to arrive whole, headers and body, however its bytes trickle in; also the longest a keep-alive connection waits for its next request. 0 turns it off. (NAVD_HEADER_TIMEOUT; default 10)"
    )
    var headerTimeout: Int?

    @Option(
        help:
            "Seconds between the `: ping` comments of event streams, so dead clients are found and proxies keep the connection. (NAVD_HEARTBEAT; default 15)"
    )
    var heartbeat: Int?

    @Option(
        name: .customLong("cors-origin"),
        help:
            "An origin whose pages may call the API (https://app.example.com), or * for any; repeat for several. (NAVD_CORS_ORIGIN, comma-separated; default: none)"
    )
    var corsOrigins: [String] = []

    @Option(help: "trace, debug, info, notice, warning, error, critical. (NAVD_LOG_LEVEL; default info)")
    var logLevel: String?

    @Option(help: "text (logfmt) or json (one object a line). (NAVD_LOG_FORMAT; default text)")
    var logFormat: String?

    @Option(
        help:
            "After SIGTERM, how long /readyz answers 503 while requests are still served, so load balancers stop sending new ones: 5s, 500ms, 0. (NAVD_DRAIN; default 5s)"
    )
    var drain: String?

    @Option(help: "Then, how long requests in progress get to finish before navd stops anyway: 10s, 1m. (NAVD_SHUTDOWN_GRACE; default 10s)")
    var shutdownGrace: String?

    /// Checks every setting before anything is opened, so that a mistake is told with this
    /// command's usage.
    func validate() throws {
        _ = try ServeSettings(self, environment: Environment.current)
    }

    func run() throws {
        let settings = try ServeSettings(self, environment: Environment.current)
        Log.bootstrap(level: settings.logLevel, format: settings.logFormat)
        // Whatever way serving ends, the buffered log lines are written before the process exits.
        defer { LogSink.standardError.flush() }
        let logger = Logger(label: "navd")
        do {
            try Daemon(settings: settings, logger: logger).runUntilSignalled()
        } catch {
            // One log record, on one line, like every other: not ArgumentParser's `Error:` text,
            // which a multi-line cause (a graph's issues, libpq's hints) would spread over lines.
            // The cause in the message, whose bound (2 KiB) keeps a long one whole.
            logger.critical("navd cannot start: \(error)")
            throw ExitCode(Self.exitStatus(for: error))
        }
    }

    /// `EX_TEMPFAIL` (sysexits.h): the store is in use by another process, a condition that
    /// passes (a supervisor may retry later), not a fault of the store or of the settings.
    static let inUseExitStatus: Int32 = 75

    /// How `navd serve` exits when it cannot start: 75 when the store is in use, else 1.
    static func exitStatus(for error: any Error) -> Int32 {
        (error as? StoreError)?.kind == .inUse ? inUseExitStatus : 1
    }
}

/// The environment, read once.
enum Environment {
    static var current: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}

enum Log {
    /// The swift-log backend a program embedding navd chose (``runNavd(logHandler:)``), used in
    /// place of navd's own line handler; nil for navd's.
    static var backend: (@Sendable (String) -> any LogHandler)? {
        get { chosenBackend.withLock { $0 } }
        set { chosenBackend.withLock { $0 = newValue } }
    }

    private static let chosenBackend = Mutex<(@Sendable (String) -> any LogHandler)?>(nil)

    static func bootstrap(level: Logger.Level, format: LogFormat) {
        if let backend {
            LoggingSystem.bootstrap { label in
                var handler = backend(label)
                handler.logLevel = level
                return handler
            }
            return
        }
        LogSink.standardError.format = format
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level) }
    }
}
