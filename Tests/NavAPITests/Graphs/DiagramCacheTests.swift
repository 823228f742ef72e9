import NavDiagram
import NavJSON
import Testing

@testable import NavAPI
@testable import NavSessions
@testable import NavTestSupport

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
        let work = Budget(resource: "graph_work", limit: 1)
        let first = try cache.rendering(versions[0], as: .svg, work: work)
        #expect(first == Diagram(graph: versions[0].graph).rendered(as: .svg))
        #expect(try cache.rendering(versions[0], as: .svg, work: work) == first)
        #expect(cache.usage.entries == 1 && cache.usage.bytes == first.count)
        let second = try cache.rendering(versions[1], as: .svg, work: work)
        let third = try cache.rendering(versions[2], as: .svg, work: work)
        #expect(second != first && third != second)
        #expect(cache.usage.entries == 2 && cache.usage.bytes == second.count + third.count)
    }

    @Test func aDrawingLargerThanTheBoundIsAnsweredButNotKept() throws {
        let versions = try Self.versions(1)
        let cache = DiagramCache(maxEntries: 4, maxBytes: 100)
        let work = Budget(resource: "graph_work", limit: 1)
        #expect(try cache.rendering(versions[0], as: .svg, work: work).count > 100)
        #expect(cache.usage.entries == 0 && cache.usage.bytes == 0)
    }

    /// A graph of `scenes` scenes, each linking to the next: `2 * scenes` elements to draw.
    static func chain(_ scenes: Int) throws -> GraphVersion {
        var members: [String: JSONValue] = [:]
        for index in 0..<scenes {
            members["s\(index)"] = ["links": ["next": ["path": .string("/s\((index + 1) % scenes)")]]]
        }
        return try GraphRegistry().add(["name": "chain", "start": "/s0", "scenes": .object(members)]).0
    }

    /// The largest graph drawn fits the cache, so it is drawn once (an 8 MB graph's diagram was
    /// drawn again on every request, over the cache's bound); a larger one is refused before
    /// any work, and a drawing holds a `graph_work` slot only while it runs.
    @Test func theLargestDiagramIsKeptAndALargerGraphIsNotDrawn() throws {
        let cache = DiagramCache()
        let work = Budget(resource: "graph_work", limit: 1)
        let largest = try Self.chain(cache.maxElements / 2)
        let drawn = try cache.rendering(largest, as: .svg, work: work)
        #expect(cache.usage.entries == 1 && cache.usage.bytes == drawn.count)
        #expect(work.used == 0)
        // Answered from the cache even while the work budget is full.
        #expect(work.acquire())
        #expect(try cache.rendering(largest, as: .svg, work: work) == drawn)
        #expect(throws: APIError.self) { try cache.rendering(largest, as: .dot, work: work) }
        work.release()
        let larger = try Self.chain(cache.maxElements / 2 + 1)
        do {
            _ = try cache.rendering(larger, as: .mermaid, work: work)
            Issue.record("a graph over the bound was drawn")
        } catch {
            #expect(error.code == .invalidRequest)
        }
        #expect(cache.usage.entries == 1 && work.used == 0)
    }
}
