import NavHTTP
import NavJSON
import Testing

@testable import NavAPI
@testable import NavSessions
@testable import NavTestSupport

/// What a kept answer holds is what its cost counts (`docs/design.md`, "Idempotency answers"):
/// a body written by a `JSONWriter` keeps the writer's room beyond its bytes (reserved ahead, or
/// left by doubling as it grew), and an answer kept with that room took several times its cost.
@Suite struct KeptAnswerCapacityTests {
    /// A view with a 60 KB screen state, written in a buffer reserved for four times as much.
    static func writtenView() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 240_000)
        writer.write(.object(["id": .string("s"), "state": .object(["blob": .string(String(repeating: "y", count: 60_000))])]))
        return writer.finish()
    }

    /// At most the allocator's rounding beyond the bytes counted.
    static func holds(_ body: [UInt8], within cost: Int) -> Bool {
        body.capacity <= cost + cost / 4
    }

    @Test func aKeptAnswerHoldsNoMoreThanItsCost() {
        let body = Self.writtenView()
        #expect(body.capacity > 2 * body.count, "the writer leaves room: the case this is about")
        let answer = KeptAnswer(
            key: "s k", session: "s", fingerprint: [UInt8](repeating: 7, count: 32), status: 200,
            headers: [("Content-Type", "application/json"), ("ETag", "\"3\"")], body: body)
        #expect(answer.body == body)
        #expect(Self.holds(answer.body, within: answer.cost), "holds \(answer.body.capacity) bytes, counted \(answer.cost)")
    }

    @Test func theDaemonsMemoryOfAnswersHoldsNoMoreThanItCounts() throws {
        let cache = IdempotencyCache()
        let body = Self.writtenView()
        cache.store(
            "s k",
            .init(
                fingerprint: [UInt8](repeating: 7, count: 32),
                response: HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body), session: "s"))
        let record = try #require(cache.lookup("s k"))
        #expect(record.response.body == body)
        let cost = IdempotencyCache.cost("s k", record)
        #expect(Self.holds(record.response.body, within: cost), "holds \(record.response.body.capacity) bytes, counted \(cost)")
    }
}
