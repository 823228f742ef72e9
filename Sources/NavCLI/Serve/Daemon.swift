import Dispatch
import Logging
import NavAPI
import NavCore
import NavHTTP
import NavJSON
import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// `navd serve` at run time: opens the store, loads graphs, serves until SIGTERM/SIGINT,
/// then drains: stop accepting, finish in-flight requests, close the store.
struct Daemon {
    let settings: ServeSettings
    let logger: Logger

    func runUntilSignalled() throws {
        // Block the signals before any thread starts, so every thread inherits the mask
        // and only `sigwait` below ever sees them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)

        // The connections that fit the open-file limit, before the application: half of them is
        // the watchers' budget.
        let connections = FileDescriptorLimit.fit(connections: settings.maxConnections, logger: logger)
        let (application, store) = try Self.application(
            for: settings, logger: logger, accessLog: Self.accessLog(for: logger), connections: connections
        )

        var configuration = HTTPServer.Configuration(threads: settings.threads)
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.maxBody = settings.maxBody
        configuration.connectionLimit = connections
        configuration.connectionTimeout = settings.connectionTimeout
        configuration.headerTimeout = settings.headerTimeout
        configuration.shutdownGracePeriod = Double(settings.shutdownGraceMilliseconds) / 1000
        configuration.polling = settings.polling
        let server = HTTPServer(configuration: configuration, handler: application, logger: logger)
        // Each endpoint's deliverer, on a thread of its own (the lease names this process):
        // started before the server, so that GET /v1/webhooks lists every endpoint from the first
        // request on. A store no other process opens (memory, SQLite) has one owner under one name,
        // so a daemon restarted after a crash takes its own lease at once instead of waiting for it
        // to expire; on a shared store each process is named apart.
        var random = SystemRandomNumberGenerator()
        let shared = application.sessions.store is any ChangeFeed
        let owner = shared ? "\(getpid())-" + String(random.next() as UInt64, radix: 36) : "sole-process"
        application.webhooks.start(settings.webhooks, sessions: application.sessions, owner: owner, logger: logger)
        do {
            try server.start()
        } catch {
            application.webhooks.stop()
            throw error
        }
        logger.notice(
            "navd listening",
            metadata: [
                "address": "\(settings.listen.withPort(server.boundPort))", "store": "\(store.name)", "threads": "\(settings.threads)"
            ])

        application.sessions.live.startHeartbeat(every: Double(settings.heartbeatSeconds))
        application.sessions.followStore()
        let sweeper = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "navd.sweeper"))
        // A quarter of the shortest time anything is kept for: sessions, and feed records. The
        // first at once: what expired while navd was down goes now, and a feed over a budget
        // lowered since the last run is brought within it before a minute of writes passes.
        let kept = min(settings.sessionTTLMilliseconds, settings.feed?.retention ?? .max)
        let interval = max(1, min(60, Int(kept / 1000 / 4)))
        sweeper.schedule(deadline: .now(), repeating: .seconds(interval))
        sweeper.setEventHandler { [logger] in
            do throws(ServiceError) {
                let removed = try application.sessions.sweep()
                if removed > 0 { logger.info("expired sessions removed", metadata: ["count": "\(removed)"]) }
            } catch {
                logger.error("session sweep failed", metadata: ["cause": "\(error.logMessage ?? error.detail)"])
            }
        }
        sweeper.resume()
        // Buffered log lines (see LogSink) go out at least every 100 ms.
        let logFlusher = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "navd.log"))
        logFlusher.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100), leeway: .milliseconds(20))
        logFlusher.setEventHandler { LogSink.standardError.flush() }
        logFlusher.resume()

        var received: Int32 = 0
        sigwait(&signals, &received)
        // The drain: /readyz answers 503 while requests are still served, so that load balancers
        // take this instance out of rotation before it stops accepting. A second signal cuts it short.
        application.ready.drain()
        let drain = settings.drainMilliseconds
        logger.notice(
            "shutting down",
            metadata: [
                "signal": "\(Self.name(of: received))", "drain_ms": "\(drain)", "grace_ms": "\(settings.shutdownGraceMilliseconds)"
            ])
        if drain > 0 {
            var timeout = timespec(tv_sec: Int(drain / 1000), tv_nsec: Int(drain % 1000) * 1_000_000)
            var info = siginfo_t()
            var again: Int32 = -1
            repeat {
                again = sigtimedwait(&signals, &info, &timeout)
            } while again < 0 && errno == EINTR
            if again > 0 { logger.notice("drain cut short", metadata: ["signal": "\(Self.name(of: again))"]) }
        }
        logger.notice("stopped accepting; finishing requests in progress")
        sweeper.cancel()
        logFlusher.cancel()
        // Streams are told why they end; long polls answer now.
        application.sessions.live.stopHeartbeat()
        application.sessions.live.endAll(.shutdown)
        server.stop()
        // Posts in progress are cut short and the leases given up, before the store closes.
        application.webhooks.stop()
        store.close()
        logger.notice("navd stopped")
    }

    private static func name(of signal: Int32) -> String {
        signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : "signal \(signal)"
    }

    /// What `navd serve` answers every request with: the store `settings` name, opened, with the
    /// graphs it keeps restored and the `--graph` files loaded (the first is the default graph).
    /// All of the daemon but the socket, the timers and the signals, so that tests build the
    /// application the binary would build from the same arguments and call it without a socket.
    ///
    /// - Throws: when the store does not open or a graph does not load (the store is closed again).
    ///
    /// - Parameter connections: the connections the server accepts (`--max-connections`, or fewer
    ///   when the open-file limit is lower); watchers may hold half of them, so that ordinary
    ///   requests always find room (docs/design.md, "Watchers").
    static func application(
        for settings: ServeSettings, logger: Logger, accessLog: LogSink? = nil, connections: Int? = nil
    ) throws -> (application: Application, store: any SessionStore) {
        // --max-context bounds a context however it is set: at creation (the session service) and
        // by every later change (NavCore's limit, checked with the merge patch applied).
        let budgets = Budgets()
        var limits = Limits.defaults
        limits.maxContextBytes = settings.maxContext
        let graphs = GraphRegistry(limits: limits, memory: budgets.make("graph_bytes", limit: settings.maxGraphMemory))
        let store = try StoreFactory.open(
            settings.store, graphs: graphs, connections: settings.postgresConnections, notifies: settings.postgresNotifies,
            cacheBytes: settings.cacheBytes, answerLogBytes: settings.maxIdempotencyBytes / 4, logger: logger
        )
        let application = Application(
            graphs: graphs,
            configuration: .init(
                adminToken: settings.adminToken,
                backendToken: settings.backendToken,
                sessions: .init(
                    maxSessions: settings.maxSessions, sessionTTL: settings.sessionTTLMilliseconds, maxContextBytes: settings.maxContext,
                    maxIdempotencyBytesPerSession: settings.maxIdempotencyBytesPerSession,
                    maxIdempotencyBytes: settings.maxIdempotencyBytes,
                    maxSessionBytes: settings.maxSessionBytes,
                    feed: settings.feed
                ),
                corsOrigins: settings.corsOrigins,
                maxWatchers: max(1, (connections ?? settings.maxConnections) / 2),
                maxWatchersPerSession: settings.maxWatchersPerSession,
                maxWatcherBuffer: settings.maxWatcherBuffer,
                maxGraphWork: settings.maxGraphWork
            ),
            store: store, logger: logger, accessLog: accessLog, budgets: budgets
        )
        do {
            try StoreFactory.restoreGraphs(from: store, into: application.graphs, logger: logger)
            for (index, file) in settings.graphFiles.enumerated() {
                let document = try GraphFile.read(file)
                let version = try Self.load(document, into: application.graphs, file: file)
                // The first --graph is the default, whatever the store held before.
                if index == 0 { application.graphs.setDefault(version.graph.name) }
                for warning in version.warnings {
                    // The level says it is a warning: the fields say what and where, once each.
                    logger.warning(
                        "graph issue",
                        metadata: [
                            "file": "\(file)", "pointer": "\(warning.pointer.isEmpty ? "/" : warning.pointer)",
                            "code": "\(warning.code.name)",
                            "detail": "\(warning.message)"
                        ])
                }
                logger.info(
                    "graph loaded", metadata: ["file": "\(file)", "graph": "\(version.graph.name)", "version": "\(version.version)"])
            }
        } catch {
            store.close()
            throw error
        }
        if (try? application.graphs.defaultName()) == nil {
            logger.warning("no graph loaded: pass --graph FILE or upload one with PUT /v1/graphs/{name}")
        }
        // A graph uploaded later starts its endpoint's deliveries then; a name mistyped never does.
        for endpoint in settings.webhooks {
            guard let graph = endpoint.graph, (try? application.graphs.latest(graph)).flatMap({ $0 }) == nil else { continue }
            logger.warning(
                "webhook endpoint's graph is not loaded: it is sent nothing until the graph is uploaded (check --webhook-graph)",
                metadata: ["webhook": "\(endpoint.name)", "graph": "\(graph)"])
        }
        return (application, store)
    }

    /// The sink request lines can be written to directly: the logger's own, when its handler is a
    /// ``LineLogHandler`` that adds no metadata (as `navd serve` sets it up); otherwise none, and
    /// request lines go through the logger like any other line.
    static func accessLog(for logger: Logger) -> LogSink? {
        guard let handler = logger.handler as? LineLogHandler, handler.metadata.isEmpty, handler.metadataProvider == nil else {
            return nil
        }
        return handler.sink
    }

    /// Adds a `--graph` file's document: a new version unless the store's latest version of
    /// that graph already is this document (the store decides, so processes starting together
    /// with the same files agree on one version).
    static func load(_ document: JSONValue, into graphs: GraphRegistry, file: String) throws -> GraphVersion {
        do {
            return try graphs.add(document).0
        } catch {
            throw GraphLoadError(file: file, issues: error.issues ?? [], detail: error.detail)
        }
    }
}

struct GraphLoadError: Error, CustomStringConvertible {
    var file: String
    var issues: [GraphIssue]
    var detail: String

    var description: String {
        ([("\(file): \(detail)")] + issues.map { "\(file): \($0)" }).joined(separator: "\n")
    }
}
