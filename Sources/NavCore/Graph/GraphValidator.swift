/// Cross-reference checks on a decoded graph: targets exist, templates and the start path
/// parse and fit the graph, every scene can be reached.
struct GraphValidator {
    let graph: Graph

    func issues() -> [GraphIssue] {
        var issues: [GraphIssue] = []
        let navigator = Navigator(graph: graph)

        for scene in graph.scenes.values.sorted(by: { $0.name < $1.name }) {
            let at = pointer("/scenes", scene.name)
            for (position, tab) in (scene.tabs ?? []).enumerated() where graph.scenes[tab] == nil {
                issues.append(GraphIssue(.unknownScene, at: pointer(pointer(at, "tabs"), String(position)), "tab '\(tab)' is not a scene"))
            }
            for name in scene.links.keys.sorted() {
                if let link = scene.links[name] {
                    issues += check(link, at: pointer(pointer(pointer(at, "links"), name), "path"))
                }
            }
        }
        for name in graph.links.keys.sorted() {
            if let link = graph.links[name] {
                issues += check(link, at: pointer(pointer("/links", name), "path"))
            }
        }

        do {
            let expression = try PathExpression.parse(graph.start)
            switch expression {
            case .absolute(let path), .relative(ups: 0, let path):
                do {
                    _ = try navigator.normalise(Path().resolving(expression))
                    if path.isEmpty { issues.append(GraphIssue(.invalidStart, at: "/start", "the start path is empty")) }
                } catch {
                    issues.append(GraphIssue(.invalidStart, at: "/start", error.description))
                }
            default:
                issues.append(GraphIssue(.invalidStart, at: "/start", "the start path cannot go up"))
            }
        } catch {
            issues.append(GraphIssue(.invalidStart, at: "/start", "invalid_path: \(error)"))
        }

        return issues
    }

    /// A template must parse once filled, and every scene it names must exist.
    private func check(_ link: Link, at: String) -> [GraphIssue] {
        let sample = link.filled { _ in "0" }
        do {
            let expression = try PathExpression.parse(sample)
            return sceneNames(in: expression).compactMap { name in
                graph.scenes[name] == nil ? GraphIssue(.unknownScene, at: at, "'\(name)' in '\(link.template)' is not a scene") : nil
            }
        } catch {
            return [GraphIssue(.invalidTemplate, at: at, "'\(link.template)' is not a valid path: \(error)")]
        }
    }

    private func sceneNames(in expression: PathExpression) -> [String] {
        switch expression {
        case .absolute(let path), .relative(_, let path): path.components.map(\.name)
        case .up: []
        }
    }
}
