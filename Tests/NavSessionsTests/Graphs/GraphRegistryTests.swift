import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// Without a store (`--store memory`) the registry numbers versions itself, by the same rules
/// the stores follow.
@Suite struct GraphRegistryTests {
    static func document(_ name: String, extraScene: String? = nil) throws -> JSONValue {
        var scenes: [String: JSONValue] = ["top": .object([:])]
        if let extraScene { scenes[extraScene] = .object([:]) }
        return .object(["name": .string(name), "start": "/top", "scenes": .object(scenes)])
    }

    @Test func theSameDocumentAgainIsNotANewVersion() throws {
        let graphs = GraphRegistry()
        let (first, created) = try graphs.add(Self.document("a"))
        #expect(first.version == 1 && created)
        let (again, createdAgain) = try graphs.add(Self.document("a"))
        #expect(again === first && !createdAgain)
        let (changed, createdChanged) = try graphs.add(Self.document("a", extraScene: "more"))
        #expect(changed.version == 2 && !createdChanged)
        // Back to the first document: it is not the latest, so it is a new version.
        #expect(try graphs.add(Self.document("a")).0.version == 3)
        #expect(try graphs.latest("a")?.version == 3)
        #expect(graphs.version("a", 2) === changed)
    }

    @Test func theDefaultIsTheFirstGraphAddedUnlessOneIsSet() throws {
        let graphs = GraphRegistry()
        #expect(try graphs.defaultName() == nil)
        try graphs.add(Self.document("a"))
        try graphs.add(Self.document("b"))
        #expect(try graphs.defaultName() == "a")
        graphs.setDefault("b")
        #expect(try graphs.defaultName() == "b")
    }
}

/// The bounds on a graph document (its size, scenes, links, name) are for what is uploaded now:
/// a version already in the store, accepted by a navd with larger bounds, still loads, so the
/// sessions that run on it are served and it can be removed (docs/design.md, "Graphs").
@Suite struct StoredGraphBoundsTests {
    @Test func aStoredVersionOverTodaysBoundsStillLoads() throws {
        let folder = try TemporaryFolder()
        let name = String(repeating: "n", count: Graph.maxNameLength + 8)
        var scenes: [String: JSONValue] = [:]
        let limits = Limits.defaults
        for index in 0...limits.maxGraphScenes { scenes["s\(index)"] = .object([:]) }
        let document: JSONValue = .object(["name": .string(name), "start": "/s0", "scenes": .object(scenes)])
        // What an upload would answer today.
        #expect(throws: ServiceError.self) { try GraphRegistry(limits: limits).add(document) }

        let graphs = GraphRegistry(limits: limits)
        let store = try SQLiteStore(path: folder.path + "/navd.db", decode: StoreFactory.snapshotDecoder(graphs))
        defer { store.close() }
        // Stored as an older navd stored it: straight into the store.
        #expect(try store.storeGraph(document, name: name).version == 1)
        graphs.attach(store)
        let loaded = try #require(try graphs.latest(name))
        #expect(loaded.version == 1)
        #expect(loaded.graph.scenes.count == limits.maxGraphScenes + 1)
    }
}
