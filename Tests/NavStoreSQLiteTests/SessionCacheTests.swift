import NavCore
import NavJSON
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// The decoded-session cache: bounded by its entries' estimated bytes, least recently used out first.
@Suite struct SessionCacheTests {
    static let session = StoredSession(
        id: "", graphName: "g", graphVersion: 1, tokenDigest: TokenDigest(bytes: []), state: SessionState(), createdAt: 0, touchedAt: 0
    )

    static func session(_ id: String) -> StoredSession {
        var session = Self.session
        session.id = id
        return session
    }

    /// A session is counted for at least what decoding its snapshot must take, whatever the
    /// shape of its state: each value its slot (a `JSONValue`'s stride), each array or object an
    /// allocation with a header, each string of more than 15 bytes one of its own. 64 KB of text
    /// made of tiny values decodes to megabytes, which the text's size alone understated.
    @Test(arguments: ["0,", "[0],", "{\"a\":0},", "\"ab\",", "\"" + String(repeating: "x", count: 60) + "\","])
    func aSessionIsCountedForWhatItsDecodedStateMustTake(_ element: String) throws {
        let bytes = Array(("[" + String(repeating: element, count: 64_000 / element.utf8.count).dropLast() + "]").utf8)
        let slot = MemoryLayout<JSONValue>.stride
        func floor(_ value: JSONValue) -> Int {
            switch value {
            case .array(let items): 32 + items.reduce(0) { $0 + slot + floor($1) }
            case .object(let members): 32 + members.reduce(0) { $0 + 16 + slot + $1.key.utf8.count + floor($1.value) }
            case .string(let text): text.utf8.count > 15 ? 32 + text.utf8.count : 0
            default: 0
            }
        }
        let least = floor(try JSONValue(parsing: bytes))
        let counted = SessionCache.cost(snapshot: bytes)
        #expect(counted >= least, "counted \(counted) bytes for a state that takes at least \(least)")
        #expect(counted <= 8 * least, "counted \(counted) bytes for a state that takes at least \(least)")
    }

    @Test func theLeastRecentlyUsedLeaveFirstAndTheBoundHolds() {
        var cache = SessionCache(limit: 300)
        for id in ["a", "b", "c"] { cache.put(Self.session(id), cost: 100) }
        #expect(cache.count == 3 && cache.bytes == 300)
        #expect(cache.get("a") != nil)  // now b is the least recently used
        cache.put(Self.session("d"), cost: 100)
        #expect(cache.peek("b") == nil)
        #expect(["a", "c", "d"].allSatisfy { cache.peek($0) != nil })
        #expect(cache.bytes == 300)
        // Replacing an entry re-counts its cost and makes it the most recent.
        cache.put(Self.session("c"), cost: 150)
        #expect(cache.peek("a") == nil && cache.peek("c") != nil && cache.peek("d") != nil)
        #expect(cache.bytes == 250)
        cache.remove("d")
        #expect(cache.count == 1 && cache.bytes == 150)
        // One entry larger than the bound is kept (it was just read or written) until the next.
        cache.put(Self.session("huge"), cost: 1000)
        #expect(cache.count == 1 && cache.peek("huge") != nil && cache.bytes == 1000)
        cache.put(Self.session("e"), cost: 10)
        #expect(cache.count == 1 && cache.peek("e") != nil && cache.bytes == 10)
        // Slots are reused: many more sessions than fit keep the bound.
        for index in 0..<1000 { cache.put(Self.session("s\(index)"), cost: 7) }
        #expect(cache.bytes <= 300 && cache.count == 300 / 7)
        #expect(cache.peek("s999") != nil && cache.peek("s0") == nil)
    }
}
