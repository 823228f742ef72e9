import NavCore
import NavDiagram
import NavJSON

/// The diagram cases: the news example, and the largest graphs a default daemon takes (a
/// 64 KiB document holds at most about 8,000 scenes) in two shapes — random links, and a
/// chain whose every scene links back to the start (long back edges, past the dummy budget).
func diagramCases() {
    let news: JSONValue = [
        "name": "news", "start": "/top",
        "scenes": [
            "top": ["links": ["news": ["path": "list_news(category={category})"], "coupons": ["path": "!/list_coupon"]]],
            "list_news": ["links": ["show": ["path": "show_news(id={id})"]]],
            "show_news": [:], "list_coupon": [:], "show_coupon": [:],
            "home": ["container": "tabs", "tabs": ["friend", "profile"]], "friend": [:], "show_friend": [:],
            "profile": ["requires": ["user"]], "help": [:], "login": [:], "onboarding": ["removable": false]
        ],
        "links": ["login": ["path": "!login"], "top": ["path": "^/top"]]
    ]
    let graphs: [(String, JSONValue, Int)] = [
        ("draw the news example", news, 200),
        ("draw 8,000 scenes, 8,000 random links", randomGraph(scenes: 8_000, links: 8_000), 1),
        ("draw a chain of 4,000 scenes, each linking back", chainGraph(scenes: 4_000), 1)
    ]
    for (name, document, iterations) in graphs {
        guard let graph = try? Graph.decode(document).graph else {
            print("\(name): the graph does not load")
            continue
        }
        let diagram = Diagram(graph: graph)
        let bytes = diagram.rendered(as: .svg).count
        let layout = measure(name + ": layout", iterations: iterations) { consume(DiagramLayout(diagram)) }
        let whole = measure(name + ": layout and SVG", iterations: iterations) { consume(diagram.rendered(as: .svg)) }
        if !layout.isNaN {
            print("  \(graph.scenes.count) scenes: layout \(milliseconds(layout)) ms, with SVG \(milliseconds(whole)) ms, \(bytes) bytes")
        }
    }
}

private func milliseconds(_ nanoseconds: Double) -> String {
    String(Double(Int(nanoseconds / 10_000)) / 100)
}

/// Scenes `s0`…: every tenth a tabs container of the next two, links mostly to a scene a few
/// after their own (so the drawing has depth), a quarter anywhere; pushes, modals, absolute paths.
private func randomGraph(scenes: Int, links: Int) -> JSONValue {
    var state: UInt64 = 42
    func below(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
    var sceneLinks = Array(repeating: [String: JSONValue](), count: scenes)
    for _ in 0..<links {
        let from = below(scenes)
        let to = below(4) == 0 ? below(scenes) : min(scenes - 1, from + below(5))
        let prefix = ["", "", "", "!", "^/"][below(5)]
        sceneLinks[from]["l\(sceneLinks[from].count)"] = ["path": .string("\(prefix)s\(to)")]
    }
    var objects: [String: JSONValue] = [:]
    for index in 0..<scenes {
        var scene: [String: JSONValue] = [:]
        if index % 10 == 0, index + 2 < scenes {
            scene["container"] = "tabs"
            scene["tabs"] = [.string("s\(index + 1)"), .string("s\(index + 2)")]
        }
        if !sceneLinks[index].isEmpty { scene["links"] = .object(sceneLinks[index]) }
        objects["s\(index)"] = .object(scene)
    }
    return ["name": "random", "start": "/s0", "scenes": .object(objects), "links": ["home": ["path": "^/s0"], "help": ["path": "!s1"]]]
}

/// `c0 → c1 → … → cN`, each scene also linking back to `c0`.
private func chainGraph(scenes: Int) -> JSONValue {
    var objects: [String: JSONValue] = [:]
    for index in 0..<scenes {
        var links: [String: JSONValue] = ["start": ["path": "^/c0"]]
        if index + 1 < scenes { links["next"] = ["path": .string("c\(index + 1)")] }
        objects["c\(index)"] = ["links": .object(links)]
    }
    return ["name": "chain", "start": "/c0", "scenes": .object(objects)]
}
