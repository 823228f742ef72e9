import Foundation
import NavCore
import NavJSON

@testable import NavTestSupport

/// The graphs the diagram tests draw: the examples and generated ones.
enum Graphs {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples")

    static func example(_ file: String) -> Graph? {
        guard let data = try? Data(contentsOf: examples.appendingPathComponent(file)) else { return nil }
        return try? Graph.decode(json: Array(data)).graph
    }

    static var news: Graph? { example("news.json") }
    static var kabukit: Graph? { example("kabukit.json") }

    /// Context keys no format may read as syntax: quotes, backslashes, line breaks, markup,
    /// Mermaid's entity codes and edge-label bars, DOT's escapes.
    static let awkwardKeys = [
        "a\"b\\c", "line\nbreak", "<b>&amp;</b>", "#quot; | `x` ;", "style:x#35;", "\\N\\G\\l", "tab\there", "}];{"
    ]

    /// A valid graph whose scene names are keywords of DOT or Mermaid (`graph`, `node`,
    /// `edge`, `subgraph`, `strict`, `digraph`, `end`) or use every character a name may
    /// (`1st.scene-name_x`, `a_o` and `a.`, which a careless Mermaid id would merge), with
    /// awkward `requires` keys, links that name no scene and global links.
    static var awkward: Graph? {
        let document: JSONValue = [
            "name": "awk.ward-graph_1",
            "start": "/graph#node",
            "scenes": [
                "graph": ["container": "tabs", "tabs": ["node", "end"], "requires": .array(awkwardKeys.map(JSONValue.string))],
                "node": ["removable": false, "links": ["to-edge": ["path": "edge(q={q})"], "self": ["path": "!node"]]],
                "end": [:],
                "edge": ["links": ["up.one": ["path": ".."], "sub": ["path": "!/subgraph"]]],
                "1st.scene-name_x": ["links": ["s": ["path": "^/strict/a_o"]]],
                "subgraph": ["requires": ["\"\\"]],
                "strict": [:],
                "a_o": ["links": ["dot": ["path": "a."]]],
                "a.": [:],
                "digraph": ["links": ["tab": ["path": "^/graph#end"]]]
            ],
            "links": ["x": ["path": "!strict"], "back_up": ["path": "up(n=2)"], "1st": ["path": "^/1st.scene-name_x(k=v%22w)"]]
        ]
        return try? Graph.decode(document).graph
    }

    /// A valid graph of `scenes` scenes (`s0`, `s1`, …; every tenth a tabs container of the
    /// next two) with `links` scene links and `globals` global links between random scenes,
    /// pushes, modals, absolute paths, tab switches, links back up the path and to the scene
    /// itself among them.
    static func random(seed: UInt64, scenes: Int, links: Int, globals: Int = 2) -> Graph {
        var random = SplitMix64(seed: seed)
        var document: [String: JSONValue] = [:]
        var sceneLinks = Array(repeating: [String: JSONValue](), count: scenes)
        func template(to target: Int) -> String {
            switch random.below(8) {
            case 0: "!s\(target)"
            case 1: "^/s\(target)"
            case 2: "!/s\(target)(id={id})"
            case 3: "../s\(target)"
            default: "s\(target)"
            }
        }
        for _ in 0..<links {
            let from = random.below(scenes)
            // Mostly near the source (so the drawing has depth), sometimes anywhere.
            let to = random.below(4) == 0 ? random.below(scenes) : min(scenes - 1, from + random.below(5))
            let name = "l\(sceneLinks[from].count)"
            let path = random.below(40) == 0 ? ".." : template(to: to)
            sceneLinks[from][name] = ["path": .string(path)]
        }
        var sceneObjects: [String: JSONValue] = [:]
        for index in 0..<scenes {
            var scene: [String: JSONValue] = [:]
            if index % 10 == 0, index + 2 < scenes {
                scene["container"] = "tabs"
                scene["tabs"] = [.string("s\(index + 1)"), .string("s\(index + 2)")]
            }
            if index % 7 == 3 { scene["removable"] = false }
            if index % 11 == 5 { scene["requires"] = ["user"] }
            if !sceneLinks[index].isEmpty { scene["links"] = .object(sceneLinks[index]) }
            sceneObjects["s\(index)"] = .object(scene)
        }
        var globalLinks: [String: JSONValue] = [:]
        for index in 0..<globals {
            globalLinks["g\(index)"] = ["path": .string(index % 2 == 0 ? "!s\(random.below(scenes))" : "^/s\(random.below(scenes))")]
        }
        document["name"] = "generated"
        document["start"] = scenes > 10 ? "/s0#s1" : "/s0"
        document["scenes"] = .object(sceneObjects)
        document["links"] = .object(globalLinks)
        do {
            return try Graph.decode(.object(document)).graph
        } catch {
            // The generator makes valid graphs; a failure here is a bug in it.
            return Graph(name: "invalid-\(error.issues.first?.description ?? "")", start: "/s0", scenes: ["s0": Scene(name: "s0")])
        }
    }
}

extension String {
    /// The text as the DOT and Mermaid renderers write it: control characters as U+FFFD.
    var controlsReplaced: String {
        String(String.UnicodeScalarView(unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\u{FFFD}" : $0 }))
    }
}
