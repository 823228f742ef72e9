import Foundation
import NavCore
import NavJSON

/// The package root, from this file's place in `Tests/NavToursTests/`.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// An example graph of `Examples/` with its document.
func example(_ name: String) throws -> (graph: Graph, document: JSONValue) {
    let bytes = try Data(contentsOf: packageRoot.appendingPathComponent("Examples/\(name)"))
    let document = try JSONValue(parsing: Array(bytes))
    return (try Graph.decode(document).graph, document)
}

/// A graph written inline as JSON.
func graph(_ json: String) throws -> (graph: Graph, document: JSONValue) {
    let document = try JSONValue(parsing: json)
    return (try Graph.decode(document).graph, document)
}
