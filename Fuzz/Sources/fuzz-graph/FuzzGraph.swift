import FuzzSupport
import NavJSON

@testable import NavCore
@testable import NavSessions

/// Graph documents (docs/design.md, "Graph documents"): the input is read as a JSON graph (`Graph.decode(json:)`) and as
/// a YAML one (the daemon's `GraphDocument.yaml`, then `Graph.decode`). Either it is refused with
/// the typed error listing its problems, or it is a graph whose start path starts a session whose
/// stage's text parses back to the stage.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGraph(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { bytes in
        do throws(GraphError) {
            let (graph, _) = try Graph.decode(json: bytes)
            start(graph)
        } catch {
            require(!error.issues.isEmpty, "a refused JSON graph names no problem")
        }
        let document: JSONValue
        do {
            document = try GraphDocument.yaml(String(decoding: bytes, as: UTF8.self))
        } catch {
            return
        }
        do throws(GraphError) {
            let (graph, _) = try Graph.decode(document)
            start(graph)
        } catch {
            require(!error.issues.isEmpty, "a refused YAML graph names no problem")
        }
    }
    return 0
}

/// A valid graph starts (or refuses its own start path with a navigation error), and what it
/// starts is a stage whose text parses back to it.
private func start(_ graph: Graph) {
    let navigator = Navigator(graph: graph)
    guard let outcome = try? navigator.start(context: ["user": "u1"]) else { return }
    let state = outcome.state
    let all = state.allScreens
    require(!state.screens.isEmpty, "\(graph.name) starts with an empty stage")
    require(Set(all.map(\.id)).count == all.count, "\(graph.name) starts with repeated screen ids")
    let text = state.path.description
    require(
        (try? Path.parse(text)) == state.path, "\(graph.name) starts at \(text.debugDescription), which does not parse back to the stage")
}
