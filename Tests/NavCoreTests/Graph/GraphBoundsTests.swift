import NavJSON
import Testing

@testable import NavCore

/// A graph's cost is bounded by its size: memory and validation grow with its scenes plus its
/// links (never their product), and a document too large, too deep or too long-named is an
/// invalid graph with an issue that says where (docs/design.md, "Graphs").
@Suite struct GraphBoundsTests {
    /// `scenes` scenes `s0…`, each with one link of its own, and `links` global links `g0…`;
    /// the first global link's name is also scene 0's own link (so scene 0 hides it).
    static func document(scenes: Int, links: Int, start: String = "/s0", name: String = "big") -> JSONValue {
        var sceneMembers: [String: JSONValue] = [:]
        for index in 0..<scenes {
            let own = index == 0 ? "g0" : "own\(index)"
            sceneMembers["s\(index)"] = ["links": [own: ["path": .string("s\((index + 1) % scenes)")]]]
        }
        var linkMembers: [String: JSONValue] = [:]
        for index in 0..<links { linkMembers["g\(index)"] = ["path": .string("/s\(index % scenes)(x={x})")] }
        return ["name": .string(name), "start": .string(start), "scenes": .object(sceneMembers), "links": .object(linkMembers)]
    }

    @Test func linkStorageGrowsWithScenesPlusLinks() throws {
        let scenes = 400
        let links = 300
        let (graph, _) = try Graph.decode(Self.document(scenes: scenes, links: links))
        let navigator = Navigator(graph: graph)
        // Each scene's own link, the one global link scene 0 hides, and the global list once.
        #expect(navigator.storedLinkCount <= scenes + 1 + links)
    }

    @Test func globalLinksStillOfferedOnEveryScene() throws {
        let (graph, _) = try Graph.decode(Self.document(scenes: 3, links: 4))
        let navigator = Navigator(graph: graph)
        let zero = try navigator.start().state
        #expect(navigator.actions(for: zero).links.map(\.name) == ["g0", "g1", "g2", "g3"])
        #expect(navigator.actions(for: zero).links.map(\.params) == [[], ["x"], ["x"], ["x"]])
        let one = try navigator.apply(.navigate("/s1"), to: zero).state
        #expect(navigator.actions(for: one).links.map(\.name) == ["own1", "g0", "g1", "g2", "g3"])
        #expect(Array(navigator.actions(for: one).links) == Array(Navigator(graph: graph).actions(for: one).links))
        #expect(navigator.actions(for: one) == navigator.actions(for: one))
        #expect(navigator.actions(for: one) != navigator.actions(for: zero))
    }

    /// 10,000 global links on 1,000 scenes: every scene once copied all of them (ten million
    /// link values, gigabytes); now the validation holds each once.
    @Test func validationOfManyGlobalLinksCompletes() throws {
        let (graph, _) = try Graph.decode(Self.document(scenes: 1_000, links: 10_000))
        #expect(graph.links.count == 10_000)
        #expect(Navigator(graph: graph).storedLinkCount <= 1_000 + 1 + 10_000)
    }

    @Test func startPathDeeperThanTheLimitIsInvalid() throws {
        let start = String(repeating: "/s0", count: 40)
        let issues: [GraphIssue]
        do {
            _ = try Graph.decode(Self.document(scenes: 2, links: 0, start: start), limits: Limits(maxDepth: 32))
            issues = []
        } catch {
            issues = error.issues
        }
        let issue = try #require(issues.first { $0.code == .invalidStart })
        #expect(issue.pointer == "/start")
        #expect(issue.message.contains("40") && issue.message.contains("32"))
        // Within the limit it loads.
        _ = try Graph.decode(Self.document(scenes: 2, links: 0, start: start), limits: Limits(maxDepth: 40))
    }

    @Test func graphNameLengthIsBounded() throws {
        let long = String(repeating: "n", count: Graph.maxNameLength + 1)
        let issues: [GraphIssue]
        do {
            _ = try Graph.decode(Self.document(scenes: 1, links: 0, name: long))
            issues = []
        } catch {
            issues = error.issues
        }
        #expect(issues.contains { $0.code == .invalidName && $0.pointer == "/name" })
        _ = try Graph.decode(Self.document(scenes: 1, links: 0, name: String(repeating: "n", count: Graph.maxNameLength)))
    }

    @Test func sceneAndLinkCountsAreBounded() throws {
        func issues(_ document: JSONValue, _ limits: Limits) -> [GraphIssue] {
            do {
                _ = try Graph.decode(document, limits: limits)
                return []
            } catch {
                return error.issues
            }
        }
        let scenes = issues(Self.document(scenes: 11, links: 0), Limits(maxGraphScenes: 10))
        #expect(scenes.map(\.code) == [.tooLarge])
        #expect(scenes.first?.pointer == "/scenes")
        // 5 global links and 5 scene links: 10 in all.
        let links = issues(Self.document(scenes: 5, links: 5), Limits(maxGraphLinks: 9))
        #expect(links.map(\.code) == [.tooLarge])
        #expect(links.first?.pointer == "/links")
        #expect(issues(Self.document(scenes: 5, links: 5), Limits(maxGraphScenes: 5, maxGraphLinks: 10)).isEmpty)
    }

    @Test func documentBytesAreBounded() throws {
        let bytes = Array(Self.document(scenes: 50, links: 50).jsonString.utf8)
        do {
            _ = try Graph.decode(json: bytes, limits: Limits(maxGraphBytes: bytes.count - 1))
            Issue.record("a document over the bound loaded")
        } catch {
            #expect(error.issues.map(\.code) == [.tooLarge])
            #expect(error.issues.first?.pointer == "")
        }
        _ = try Graph.decode(json: bytes, limits: Limits(maxGraphBytes: bytes.count))
    }

    /// 9,990 guarded scenes whose redirects form one ring, and a tail leading into it: every
    /// scene of the ring is a cycle, the tail is not. A search from every scene took the ring's
    /// length squared (`navd validate` ran for minutes); the check is now one pass.
    @Test func redirectCyclesAreFoundInOnePass() throws {
        var scenes: [String: JSONValue] = ["home": [:]]
        let ring = 9_990
        for index in 0..<ring {
            scenes["r\(index)"] = ["requires": ["user"], "redirect": .string("/r\((index + 1) % ring)")]
        }
        // A tail into the ring, a scene redirecting to itself, and a chain that ends.
        scenes["tail"] = ["requires": ["user"], "redirect": "/r0"]
        scenes["self"] = ["requires": ["user"], "redirect": "/self"]
        scenes["end0"] = ["requires": ["user"], "redirect": "/end1"]
        scenes["end1"] = ["requires": ["user"], "redirect": "/home"]
        let issues: [GraphIssue]
        do {
            _ = try Graph.decode(["name": "ring", "start": "/home", "scenes": .object(scenes)])
            issues = []
        } catch {
            issues = error.issues
        }
        let cycles = Set(issues.filter { $0.code == .redirectCycle }.map(\.pointer))
        #expect(cycles.count == ring + 1)
        #expect(
            cycles.contains("/scenes/r0/redirect") && cycles.contains("/scenes/r9989/redirect") && cycles.contains("/scenes/self/redirect"))
        #expect(!cycles.contains("/scenes/tail/redirect") && !cycles.contains("/scenes/end0/redirect"))
    }
}
