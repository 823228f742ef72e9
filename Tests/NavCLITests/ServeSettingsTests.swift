import Logging
import NavHTTP
import NavJSON
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// `navd serve`'s `--cache-size` / `NAVD_CACHE_SIZE`: sizes with units, the option over the
/// environment, and a clear refusal of anything else.
@Suite struct ServeSettingsTests {
    static func settings(_ arguments: [String], environment: [String: String] = [:]) throws -> ServeSettings {
        try ServeSettings(try ServeCommand.parse(arguments), environment: environment)
    }

    @Test(arguments: [
        ("1048576", 1 << 20), ("64K", 64 << 10), ("256M", 256 << 20), ("2G", 2 << 30), ("512MiB", 512 << 20), ("1GiB", 1 << 30)
    ])
    func cacheSizesTakeUnits(_ text: String, _ bytes: Int) throws {
        #expect(ServeSettings.bytes(text) == bytes)
    }

    @Test func theCacheSizeDefaultsTo256MiBAndTheOptionWinsOverTheEnvironment() throws {
        #expect(try Self.settings([]).cacheBytes == SQLiteStore.defaultCacheBytes)
        #expect(SQLiteStore.defaultCacheBytes == 256 << 20)
        #expect(try Self.settings([], environment: ["NAVD_CACHE_SIZE": "64M"]).cacheBytes == 64 << 20)
        #expect(try Self.settings(["--cache-size", "1G"], environment: ["NAVD_CACHE_SIZE": "64M"]).cacheBytes == 1 << 30)
    }

    /// The HTTP server's polling mode is `poll` unless the hidden `NAVD_HTTP_POLLING` names another
    /// (the benchmarks compare them: bench/live.sh); anything else is refused.
    @Test func pollingIsPollUnlessTheEnvironmentNamesAnotherMode() throws {
        #expect(try Self.settings([]).polling == .poll)
        #expect(try Self.settings([], environment: ["NAVD_HTTP_POLLING": "epoll"]).polling == .epoll)
        #expect(try Self.settings([], environment: ["NAVD_HTTP_POLLING": "threads"]).polling == .threads)
        #expect(throws: (any Error).self) { try Self.settings([], environment: ["NAVD_HTTP_POLLING": "select"]) }
    }

    @Test(arguments: ["", "-1M", "12X", "M", "100", "512K", "99999999999999999G"])
    func aCacheSizeThatIsNotASizeOfAtLeast1MiBIsRefused(_ text: String) {
        #expect(throws: (any Error).self, "\(text)") { try Self.settings(["--cache-size", text]) }
    }
}

extension ServeSettingsTests {
    /// Every size flag reads sizes one way: `--max-body 1M` as `--max-watcher-buffer 1M` does.
    @Test func everySizeFlagTakesUnits() throws {
        let settings = try Self.settings(["--max-body", "1M", "--max-context", "8K", "--max-graph-memory", "1G"])
        #expect(settings.maxBody == 1 << 20)
        #expect(settings.maxContext == 8 << 10)
        #expect(settings.maxGraphMemory == 1 << 30)
        #expect(try Self.settings([], environment: ["NAVD_MAX_BODY": "2M"]).maxBody == 2 << 20)
        #expect(try Self.settings(["--max-body", "1024"]).maxBody == 1024)
        #expect(try Self.settings([]).maxBody == 65536)
        #expect(try Self.settings([]).maxContext == 4096)
    }

    /// A size out of its flag's range is refused naming the flag, its range and the text.
    @Test func aSizeOutOfRangeIsRefusedNamingTheRange() throws {
        #expect(throws: (any Error).self) { try Self.settings(["--max-body", "65M"]) }
        #expect(throws: (any Error).self) { try Self.settings(["--max-context", "1"]) }
        do {
            _ = try Self.settings(["--max-body", "100"])
            Issue.record("--max-body 100 was accepted")
        } catch {
            #expect("\(error)".contains("--max-body must be from 256 to 64M: bytes, or a number with K, M or G (KiB, MiB, GiB), not '100'"))
        }
    }

    /// A number from the environment reads as the option would (Swift's `Int(_:)`: a sign allowed,
    /// leading zeros too), and anything else is refused naming the option and its range.
    @Test(arguments: [("4", 4), ("+4", 4), ("004", 4), ("256", 256)])
    func aNumberFromTheEnvironmentReadsAsTheOptionWould(_ text: String, _ threads: Int) throws {
        #expect(try Self.settings([], environment: ["NAVD_THREADS": text]).threads == threads)
    }

    @Test(arguments: ["4.0", " 4", "4 ", "0x4", "four", "-4", "0", "257", "+", "99999999999999999999"])
    func aNumberThatIsNotAWholeNumberInRangeIsRefused(_ text: String) {
        #expect(throws: (any Error).self, "\(text)") { try Self.settings([], environment: ["NAVD_THREADS": text]) }
        do {
            _ = try Self.settings([], environment: ["NAVD_THREADS": text])
        } catch {
            #expect("\(error)" == "--threads must be a whole number in 1...256", "\(text)")
        }
    }

    @Test(arguments: [("127.0.0.1:8080", 8080), ("127.0.0.1:+80", 80), ("[::1]:0", 0), ("localhost:065535", 65535)])
    func aPortIsADecimalNumberUpTo65535(_ listen: String, _ port: UInt16) throws {
        #expect(try Self.settings(["--listen", listen]).port == port)
    }

    @Test(arguments: [
        "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:", "127.0.0.1", "127.0.0.1:8o", "::1:8080", "[::1:8080", "[]:80", "[1.2.3.4]:80",
        "no_such host:80", "bad..name!:80"
    ])
    func aListenAddressWithoutAPortIsRefused(_ listen: String) {
        #expect(throws: (any Error).self, "\(listen)") { try Self.settings(["--listen", listen]) }
    }

    @Test(arguments: [("90s", 90_000), ("30m", 1_800_000), ("24h", 86_400_000), ("7d", 604_800_000), ("45", 45_000), ("+2h", 7_200_000)])
    func sessionTTLsTakeUnits(_ text: String, _ milliseconds: Int64) {
        #expect(DurationText.milliseconds(text) == milliseconds)
    }

    @Test(arguments: ["", "h", "-5s", "1.5h", "5 s", "5w", "99999999999999999d"])
    func aSessionTTLThatIsNotADurationIsRefused(_ text: String) {
        #expect(DurationText.milliseconds(text) == nil, "\(text)")
    }
}

extension ServeSettingsTests {
    /// The watchers' budgets (docs/design.md, "Watchers"): 16 a session and 64 MiB of stream
    /// buffers by default, the option over the environment, nonsense refused; the daemon's watchers
    /// are half of its connections.
    @Test func theWatcherBudgetsHaveTheirDefaultsAndTheOptionWins() throws {
        let defaults = try Self.settings([])
        #expect(defaults.maxWatchersPerSession == 16)
        #expect(defaults.maxWatcherBuffer == 64 << 20)
        #expect(try Self.settings([], environment: ["NAVD_MAX_WATCHERS_PER_SESSION": "4"]).maxWatchersPerSession == 4)
        #expect(
            try Self.settings(["--max-watchers-per-session", "2"], environment: ["NAVD_MAX_WATCHERS_PER_SESSION": "4"])
                .maxWatchersPerSession == 2)
        #expect(try Self.settings([], environment: ["NAVD_MAX_WATCHER_BUFFER": "1M"]).maxWatcherBuffer == 1 << 20)
        #expect(
            try Self.settings(["--max-watcher-buffer", "128K"], environment: ["NAVD_MAX_WATCHER_BUFFER": "1M"]).maxWatcherBuffer == 128
                << 10)
        for bad in [
            ["--max-watchers-per-session", "0"], ["--max-watcher-buffer", "1000"], ["--max-watcher-buffer", "12X"],
            ["--max-watcher-buffer", "-1M"]
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try Self.settings(bad) }
        }
        let (application, store) = try Daemon.application(
            for: try Self.settings(["--store", "memory", "--max-connections", "100"]), logger: .init(label: "test"), connections: 60
        )
        defer { store.close() }
        #expect(application.budgets["watchers"]?.limit == 30)
        #expect(application.budgets["watcher_buffer_bytes"]?.limit == 64 << 20)
        #expect(application.sessions.live.maxPerSession == 16)
    }
}
