import ArgumentParser
import Logging
import NavAPI
import NavHTTP
import NavJSON
import NavSessions
import NavWebhooks

#if canImport(Glibc)
    import Glibc
#endif

/// `navd serve`'s options with environment fallbacks and defaults applied, checked.
struct ServeSettings: Sendable {
    var graphFiles: [String]
    /// Where to listen, resolved (a host name to its address) and checked before anything opens.
    var listen: ListenAddress
    /// The numeric address the server binds (`listen`'s).
    var host: String { listen.numericHost }
    var port: UInt16 { listen.port }
    var store: String
    var adminToken: String?
    /// Needed (or the admin token) to create a session, when set.
    var backendToken: String?
    var threads: Int
    /// Connections of the PostgreSQL store's pool: a setting of its own, since every replica
    /// opens this many and PostgreSQL's `max_connections` (100 by default) is shared by all.
    var postgresConnections: Int
    var maxBody: Int
    /// The largest session context, in bytes of its JSON.
    var maxContext: Int
    var maxSessions: Int
    /// The `graph_bytes` budget: loaded graph versions' estimated bytes (docs/design.md, "Graphs").
    var maxGraphMemory: Int
    /// The `graph_work` budget: heavy graph jobs at once (docs/design.md, "Heavy graph work").
    var maxGraphWork: Int
    var cacheBytes: Int
    /// The most bytes one session's kept answers may take (`--max-idempotency-bytes-per-session`).
    var maxIdempotencyBytesPerSession: Int
    /// The most bytes all kept answers may take (`--max-idempotency-bytes`).
    var maxIdempotencyBytes: Int
    /// The most bytes all sessions may take (`--max-session-bytes`).
    var maxSessionBytes: Int
    var sessionTTLMilliseconds: Int64
    /// What feed records carry and how long they are kept; nil with `--feed-retention 0`.
    var feed: FeedSettings?
    /// Where the feed is delivered (`--webhook` and its secrets), in the order given.
    var webhooks: [WebhookEndpoint]
    var maxConnections: Int
    /// The most watchers (event streams, long polls) of one session.
    var maxWatchersPerSession: Int
    /// The most bytes buffered for all event streams together.
    var maxWatcherBuffer: Int
    var connectionTimeout: Int
    var headerTimeout: Int
    /// Seconds between event streams' heartbeats.
    var heartbeatSeconds: Int
    /// Origins whose pages may call the API; `*` for any.
    var corsOrigins: [String]
    /// How the HTTP server waits for its connections: `poll` unless the hidden `NAVD_HTTP_POLLING`
    /// (`poll`, `epoll`, `threads`) says otherwise, for the benchmarks that compare them
    /// (bench/live.sh). No option: navd ships `poll` (BENCHMARKS.md, "Live sessions").
    var polling: HTTPServer.Polling
    /// Whether the PostgreSQL store's committed groups send `NOTIFY` (cross-process delivery to
    /// watchers): on unless the hidden `NAVD_PG_NOTIFY=off` says otherwise, for bench/postgres.sh,
    /// which measures what it costs. No option: turning it off breaks live sessions across processes (docs/design.md, "Across processes").
    var postgresNotifies: Bool
    var logLevel: Logger.Level
    var logFormat: LogFormat
    /// After SIGTERM: how long `/readyz` answers 503 while requests are still served.
    var drainMilliseconds: Int64
    /// Then: how long requests in progress get to finish.
    var shutdownGraceMilliseconds: Int64

    static let defaultStore = "sqlite:./.navd/navd.db"

    /// A byte size given as `given` (the option or its environment variable), else `fallback`:
    /// bytes, or a number with K, M or G (KiB, MiB, GiB), within `range`. Every size flag reads
    /// this one way, so `--max-body 1M` means what `--max-watcher-buffer 1M` does.
    private static func byteSize(_ given: String?, _ flag: String, _ fallback: String, _ range: ClosedRange<Int>) throws -> Int {
        let text = given ?? fallback
        guard let bytes = Self.bytes(text), range.contains(bytes) else {
            throw ValidationError(
                "\(flag) must be from \(spelled(range.lowerBound)) to \(spelled(range.upperBound)): bytes, or a number with K, M or G (KiB, MiB, GiB), not '\(text)'"
            )
        }
        return bytes
    }

    /// `bytes` as the shortest size a flag takes for it: `65536` → `64K`.
    private static func spelled(_ bytes: Int) -> String {
        for (suffix, unit) in [("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)] where bytes >= unit && bytes % unit == 0 {
            return "\(bytes / unit)\(suffix)"
        }
        return "\(bytes)"
    }

    /// The cores navd may use; on PostgreSQL at least 8 per pooled connection. A request thread
    /// there mostly waits for its group's commit (holding no connection: group commit, docs/design.md, "PostgreSQL"),
    /// and only changes waiting together are committed together, so the threads bound how many
    /// changes one commit can carry (BENCHMARKS.md, "PostgreSQL at the database's speed").
    static func defaultThreads(store: String, postgresConnections: Int) -> Int {
        let cores = CPUQuota.usableCores
        let postgres = store.hasPrefix("postgres://") || store.hasPrefix("postgresql://")
        return min(256, postgres ? max(cores, 8 * postgresConnections) : cores)
    }

    init(_ command: ServeCommand, environment: [String: String]) throws {
        func value(_ option: String?, _ name: String) -> String? { option ?? environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        func number(_ option: Int?, _ name: String, _ fallback: Int, _ range: ClosedRange<Int>) throws -> Int {
            let text = option.map(String.init) ?? environment[name]
            guard let text, !text.isEmpty else { return fallback }
            guard let number = text.wholeNumber, range.contains(number) else {
                throw ValidationError("\(name.replacingPrefix()) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number
        }
        graphFiles = command.graphs.isEmpty ? (environment["NAVD_GRAPH"]?.split(separator: ",").map(String.init) ?? []) : command.graphs
        let listen = value(command.listen, "NAVD_LISTEN") ?? "127.0.0.1:8080"
        do {
            self.listen = try ListenAddress.parse(listen)
        } catch {
            throw ValidationError(
                "--listen must be HOST:PORT, :PORT or [IPV6]:PORT with a port up to 65535 and an address or a host name that resolves, not '\(listen)'"
            )
        }
        store = value(command.store, "NAVD_STORE") ?? Self.defaultStore
        adminToken = value(command.adminToken, "NAVD_ADMIN_TOKEN")
        if let adminToken, adminToken.utf8.count < 16 {
            throw ValidationError("the admin token must be at least 16 characters")
        }
        backendToken = value(command.backendToken, "NAVD_BACKEND_TOKEN")
        if let backendToken, backendToken.utf8.count < 16 {
            throw ValidationError("the backend token must be at least 16 characters")
        }
        postgresConnections = try number(command.pgConnections, "NAVD_PG_CONNECTIONS", 4, 1...1000)
        threads = try number(
            command.threads, "NAVD_THREADS", Self.defaultThreads(store: store, postgresConnections: postgresConnections), 1...256)
        maxBody = try Self.byteSize(value(command.maxBody, "NAVD_MAX_BODY"), "--max-body", "64K", 256...(64 << 20))
        maxContext = try Self.byteSize(value(command.maxContext, "NAVD_MAX_CONTEXT"), "--max-context", "4K", 2...(1 << 20))
        maxSessions = try number(command.maxSessions, "NAVD_MAX_SESSIONS", 100_000, 1...100_000_000)
        maxGraphMemory = try Self.byteSize(
            value(command.maxGraphMemory, "NAVD_MAX_GRAPH_MEMORY"), "--max-graph-memory", "512M", (64 << 10)...(1 << 40))
        // One HTTP thread always free of heavy work (with --threads 1 the one thread is shared).
        maxGraphWork = try number(command.maxGraphWork, "NAVD_MAX_GRAPH_WORK", max(1, threads - 1), 1...256)
        cacheBytes = try Self.byteSize(value(command.cacheSize, "NAVD_CACHE_SIZE"), "--cache-size", "256M", (1 << 20)...(1 << 40))
        maxIdempotencyBytesPerSession = try Self.byteSize(
            value(command.maxIdempotencyBytesPerSession, "NAVD_MAX_IDEMPOTENCY_BYTES_PER_SESSION"), "--max-idempotency-bytes-per-session",
            "1M", 4096...(1 << 40))
        maxIdempotencyBytes = try Self.byteSize(
            value(command.maxIdempotencyBytes, "NAVD_MAX_IDEMPOTENCY_BYTES"), "--max-idempotency-bytes", "64M", 4096...(1 << 40))
        maxSessionBytes = try Self.byteSize(
            value(command.maxSessionBytes, "NAVD_MAX_SESSION_BYTES"), "--max-session-bytes", "1G", (64 << 10)...(1 << 40))
        maxConnections = try number(command.maxConnections, "NAVD_MAX_CONNECTIONS", 8192, 1...1_000_000)
        maxWatchersPerSession = try number(command.maxWatchersPerSession, "NAVD_MAX_WATCHERS_PER_SESSION", 16, 1...100_000)
        maxWatcherBuffer = try Self.byteSize(
            value(command.maxWatcherBuffer, "NAVD_MAX_WATCHER_BUFFER"), "--max-watcher-buffer", "64M", (64 << 10)...(1 << 40))
        connectionTimeout = try number(command.connectionTimeout, "NAVD_CONNECTION_TIMEOUT", 30, 1...3600)
        headerTimeout = try number(command.headerTimeout, "NAVD_HEADER_TIMEOUT", 10, 0...3600)
        heartbeatSeconds = try number(command.heartbeat, "NAVD_HEARTBEAT", 15, 1...3600)
        /// A repeatable option's values, or else its variable's, comma-separated.
        func list(_ option: [String], _ name: String) -> [String] {
            guard option.isEmpty else { return option }
            return environment[name]?.split(separator: ",").map { String($0).trimmingCharacters(in: " ") } ?? []
        }
        corsOrigins = list(command.corsOrigins, "NAVD_CORS_ORIGIN")
        for origin in corsOrigins where !CORSPolicy.isValidOrigin(origin) {
            throw ValidationError(
                "--cors-origin must be * or an origin such as https://app.example.com (scheme://host[:port]), not '\(origin)'")
        }
        let ttl = value(command.sessionTTL, "NAVD_SESSION_TTL") ?? "24h"
        guard let milliseconds = DurationText.milliseconds(ttl), milliseconds > 0 else {
            throw ValidationError("--session-ttl must look like 90s, 30m, 24h or 7d, not '\(ttl)'")
        }
        sessionTTLMilliseconds = milliseconds
        let retention = value(command.feedRetention, "NAVD_FEED_RETENTION") ?? "7d"
        guard let retentionMilliseconds = retention == "0" ? 0 : DurationText.milliseconds(retention), retentionMilliseconds >= 0 else {
            throw ValidationError("--feed-retention must look like 90s, 30m, 24h or 7d, or be 0 (no feed), not '\(retention)'")
        }
        let attributes = list(command.feedAttribute, "NAVD_FEED_ATTRIBUTE")
        for key in attributes where key.isEmpty || key.utf8.count > 128 {
            throw ValidationError("--feed-attribute must be a context key of 1 to 128 bytes, not '\(key)'")
        }
        let maxFeedBytes = try Self.byteSize(
            value(command.maxFeedBytes, "NAVD_MAX_FEED_BYTES"), "--max-feed-bytes", "256M", (64 << 10)...(1 << 44))
        feed =
            retentionMilliseconds == 0
            ? nil : FeedSettings(attributes: attributes, retention: retentionMilliseconds, maxBytes: maxFeedBytes)
        webhooks = try WebhookSettings.endpoints(
            .init(
                webhooks: list(command.webhooks, "NAVD_WEBHOOK"), secrets: command.webhookSecrets, secretFiles: command.webhookSecretFiles,
                graphs: command.webhookGraphs),
            environment: environment, feedIsOn: feed != nil)
        let polling = value(nil, "NAVD_HTTP_POLLING") ?? HTTPServer.Polling.poll.rawValue
        guard let mode = HTTPServer.Polling(rawValue: polling) else {
            throw ValidationError("NAVD_HTTP_POLLING must be poll, epoll or threads, not '\(polling)'")
        }
        self.polling = mode
        switch value(nil, "NAVD_PG_NOTIFY") ?? "on" {
        case "on": postgresNotifies = true
        case "off": postgresNotifies = false
        case let other: throw ValidationError("NAVD_PG_NOTIFY must be on or off, not '\(other)'")
        }
        let level = value(command.logLevel, "NAVD_LOG_LEVEL") ?? "info"
        guard let parsed = Logger.Level(rawValue: level) else { throw ValidationError("unknown log level '\(level)'") }
        logLevel = parsed
        let format = value(command.logFormat, "NAVD_LOG_FORMAT") ?? "text"
        guard let logFormat = LogFormat(rawValue: format) else {
            throw ValidationError("--log-format must be text or json, not '\(format)'")
        }
        self.logFormat = logFormat
        func duration(_ option: String?, _ name: String, _ fallback: Int64) throws -> Int64 {
            let text = value(option, name) ?? "\(fallback)ms"
            guard let milliseconds = DurationText.milliseconds(text), milliseconds <= 3_600_000 else {
                throw ValidationError("\(name.replacingPrefix()) must look like 5s, 500ms, 1m or 0, at most 1h, not '\(text)'")
            }
            return milliseconds
        }
        drainMilliseconds = try duration(command.drain, "NAVD_DRAIN", 5000)
        shutdownGraceMilliseconds = try duration(command.shutdownGrace, "NAVD_SHUTDOWN_GRACE", 10_000)
    }
}

extension ServeSettings {
    /// `4096`, `64K`, `256M`, `2G` (powers of 1024; `KiB`, `MiB`, `GiB` too) → bytes.
    static func bytes(_ text: String) -> Int? {
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)]
        for (suffix, unit) in units where text.hasSuffix(suffix) {
            guard let amount = text.dropLast(suffix.count).wholeNumber, amount >= 0 else { return nil }
            let (product, overflow) = amount.multipliedReportingOverflow(by: unit)
            return overflow ? nil : product
        }
        return text.wholeNumber.flatMap { $0 >= 0 ? $0 : nil }
    }
}

extension StringProtocol {
    /// The whole number a setting spells: decimal digits, a `+` or `-` allowed first (the syntax of
    /// Swift's `Int(_:)`, which the options themselves are read with), nothing else.
    fileprivate var wholeNumber: Int? {
        DecimalDigits.parse(utf8, sign: .plusOrMinus)
    }
}

extension String {
    /// `NAVD_MAX_BODY` → `--max-body`, for error messages.
    fileprivate func replacingPrefix() -> String {
        "--" + dropFirst(5).lowercased().replacingUnderscores()
    }

    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
