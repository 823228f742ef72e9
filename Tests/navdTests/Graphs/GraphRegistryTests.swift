import Foundation
import NavCore
@testable import navd
import NavJSON
@testable import NavServer
import Testing

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
