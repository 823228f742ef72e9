/// Cross-reference checks on a decoded graph: targets exist, templates and the start path
/// parse and fit the graph, every scene can be reached.
struct GraphValidator {
    let graph: Graph
    /// The limits sessions on the graph will run under: the start path must fit them.
    var limits = Limits()

    func issues() -> [GraphIssue] {
        var issues: [GraphIssue] = []
        let navigator = Navigator(graph: graph, limits: limits)

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
            if let redirect = scene.redirect {
                issues += check(path: redirect, at: pointer(at, "redirect"), code: .invalidRedirect)
                if scene.requires.isEmpty {
                    issues.append(
                        GraphIssue(
                            .invalidRedirect, at: pointer(at, "redirect"), "'\(scene.name)' requires nothing, so it never redirects",
                            severity: .warning
                        )
                    )
                }
            }
            for name in scene.commands.keys.sorted() {
                if let path = scene.commands[name]?.navigate {
                    issues += check(path: path, at: pointer(pointer(pointer(at, "commands"), name), "navigate"), code: .invalidTemplate)
                }
            }
        }
        issues += redirectCycles()
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
                    let target = try navigator.normalise(Path().resolving(expression))
                    if path.isEmpty {
                        issues.append(GraphIssue(.invalidStart, at: "/start", "the start path is empty"))
                    } else if target.count > limits.maxDepth {
                        // Every create would be refused `stack_too_deep` there.
                        issues.append(
                            GraphIssue(
                                .invalidStart, at: "/start", "the start path is \(target.count) screens deep (limit \(limits.maxDepth))")
                        )
                    }
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

    /// A path written in the graph (a redirect, a command's navigation) must parse, and every
    /// scene it names must exist.
    private func check(path: String, at: String, code: GraphIssue.Code) -> [GraphIssue] {
        do {
            let expression = try PathExpression.parse(path)
            return sceneNames(in: expression).compactMap { name in
                graph.scenes[name] == nil ? GraphIssue(.unknownScene, at: at, "'\(name)' in '\(path)' is not a scene") : nil
            }
        } catch {
            return [GraphIssue(code, at: at, "'\(path)' is not a valid path: \(error)")]
        }
    }

    /// Scenes whose redirects lead, through other redirecting scenes, back to themselves: such a
    /// navigation could only end at the chain limit, so the graph is refused instead.
    private func redirectCycles() -> [GraphIssue] {
        // A scene's redirect leads to the guarded scenes its path names (those that may redirect again).
        var next: [String: [String]] = [:]
        for scene in graph.scenes.values {
            guard !scene.requires.isEmpty, let redirect = scene.redirect,
                let expression = try? PathExpression.parse(redirect)
            else { continue }
            next[scene.name] = sceneNames(in: expression).filter { name in
                guard let target = graph.scenes[name] else { return false }
                return !target.requires.isEmpty && target.redirect != nil
            }
        }
        // A scene leads back to itself when it lies on a cycle of `next`: in a strongly connected
        // component of more than one scene, or redirecting to itself. One pass (Tarjan's), so a
        // long chain costs its length, not its length squared as a search from every scene did.
        var order: [String: Int] = [:]
        var low: [String: Int] = [:]
        var onStack: Set<String> = []
        var stack: [String] = []
        var cyclic: Set<String> = []
        for root in next.keys.sorted() where order[root] == nil {
            order[root] = order.count
            low[root] = order[root]
            stack.append(root)
            onStack.insert(root)
            // Each visit: a scene and how many of its edges it has followed.
            var visits: [(name: String, edge: Int)] = [(root, 0)]
            while let visit = visits.last {
                let edges = next[visit.name] ?? []
                if visit.edge < edges.count {
                    visits[visits.count - 1].edge += 1
                    let target = edges[visit.edge]
                    if let seen = order[target] {
                        if onStack.contains(target) { low[visit.name] = min(low[visit.name] ?? seen, seen) }
                    } else {
                        order[target] = order.count
                        low[target] = order[target]
                        stack.append(target)
                        onStack.insert(target)
                        visits.append((target, 0))
                    }
                    continue
                }
                visits.removeLast()
                let reached = low[visit.name] ?? 0
                if let parent = visits.last { low[parent.name] = min(low[parent.name] ?? reached, reached) }
                guard reached == order[visit.name] else { continue }
                var component: [String] = []
                while let top = stack.popLast() {
                    onStack.remove(top)
                    component.append(top)
                    if top == visit.name { break }
                }
                if component.count > 1 || edges.contains(visit.name) { cyclic.formUnion(component) }
            }
        }
        var issues: [GraphIssue] = []
        for start in next.keys.sorted() where cyclic.contains(start) {
            issues.append(
                GraphIssue(
                    .redirectCycle, at: pointer(pointer("/scenes", start), "redirect"),
                    "the redirect of '\(start)' leads back to '\(start)'")
            )
        }
        return issues
    }

    private func sceneNames(in expression: PathExpression) -> [String] {
        switch expression {
        case .absolute(let path), .relative(_, let path): path.components.map(\.name)
        case .up: []
        }
    }
}
