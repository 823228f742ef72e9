@testable import navd
import NavHTTP
@testable import NavServer
import Testing

/// `navd serve`'s `--cache-size` / `NAVD_CACHE_SIZE`: sizes with units, the option over the
/// environment, and a clear refusal of anything else.
@Suite struct ServeSettingsTests {
    static func settings(_ arguments: [String], environment: [String: String] = [:]) throws -> ServeSettings {
        try ServeSettings(try ServeCommand.parse(arguments), environment: environment)
    }

    @Test(arguments: [
        ("1048576", 1 << 20), ("64K", 64 << 10), ("256M", 256 << 20), ("2G", 2 << 30), ("512MiB", 512 << 20), ("1GiB", 1 << 30),
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
