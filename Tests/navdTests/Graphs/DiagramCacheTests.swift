import NavDiagram
import NavJSON
import Testing

@testable import navd
@testable import NavServer

/// Drawings are kept by graph version, within their bounds, oldest out first.
@Suite struct DiagramCacheTests {
    static func versions(_ count: Int) throws -> [GraphVersion] {
        let graphs = GraphRegistry()
        return try (0..<count).map { index in
            let scenes: JSONValue = .object(["top": .object([:]), "s\(index)": .object([:])])
            return try graphs.add(.object(["name": "g", "start": "/top", "scenes": scenes])).0
        }
    }

    @Test func aVersionIsDrawnOnceAndTheOldestLeavesFirst() throws {
        let versions = try Self.versions(3)
        let cache = DiagramCache(maxEntries: 2)
        let first = cache.rendering(versions[0], as: .svg)
        #expect(first == Diagram(graph: versions[0].graph).rendered(as: .svg))
        #expect(cache.rendering(versions[0], as: .svg) == first)
        #expect(cache.usage.entries == 1 && cache.usage.bytes == first.count)
        let second = cache.rendering(versions[1], as: .svg)
        let third = cache.rendering(versions[2], as: .svg)
        #expect(second != first && third != second)
        #expect(cache.usage.entries == 2 && cache.usage.bytes == second.count + third.count)
    }

    @Test func aDrawingLargerThanTheBoundIsAnsweredButNotKept() throws {
        let versions = try Self.versions(1)
        let cache = DiagramCache(maxEntries: 4, maxBytes: 100)
        #expect(cache.rendering(versions[0], as: .svg).count > 100)
        #expect(cache.usage.entries == 0 && cache.usage.bytes == 0)
    }
}
