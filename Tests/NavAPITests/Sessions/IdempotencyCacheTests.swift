@testable import NavAPI
@testable import NavHTTP
import Testing
@testable import NavTestSupport

/// The answers kept for `Idempotency-Key` retries are bounded in bytes, not only in number: a
/// session view can be megabytes (large screen states), and anyone holding a session could
/// otherwise make navd keep 10,000 of them (a no-op navigate under a fresh key each time grew
/// a daemon by ~3 MB a request).
@Suite struct IdempotencyCacheTests {
    static func record(bytes: Int, tag: UInt8 = 0) -> IdempotencyCache.Record {
        .init(fingerprint: [tag], response: HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: [UInt8](repeating: tag, count: bytes)))
    }

    @Test func largeAnswersAreDroppedOldestFirstOnceTheirBytesReachTheLimit() {
        let cache = IdempotencyCache()
        let keys = (0..<200).map { "session\u{0}key-\($0)" }
        for (index, key) in keys.enumerated() { cache.store(key, Self.record(bytes: 1 << 20, tag: UInt8(index % 256))) }
        let kept = keys.filter { cache.lookup($0) != nil }
        let keptBytes = kept.reduce(0) { $0 + (cache.lookup($1)?.response.body.count ?? 0) }
        #expect(keptBytes <= 64 << 20, "\(kept.count) answers of 1 MiB kept")
        #expect(cache.lookup(keys[0])?.fingerprint == nil, "the oldest answer leaves first")
        // The newest answers are the ones kept, intact, so a prompt retry still replays.
        #expect(kept == Array(keys.suffix(kept.count)))
        #expect(kept.count >= 32)
        #expect(cache.lookup(keys[199])?.fingerprint == [UInt8(199)])
        #expect(cache.lookup(keys[199])?.response.body.count == 1 << 20)
    }

    @Test func smallAnswersAreStillBoundedByNumber() {
        let cache = IdempotencyCache(capacity: 3)
        for index in 0..<4 { cache.store("k\(index)", Self.record(bytes: 10, tag: UInt8(index))) }
        #expect(cache.lookup("k0") == nil)
        #expect((1..<4).allSatisfy { cache.lookup("k\($0)")?.fingerprint == [UInt8($0)] })
    }
}
