import Foundation
import NavCore
import NavJSON

/// Files the tests read: the shared conformance fixtures and the example graphs.
enum Fixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples")

    static func json(_ name: String) -> JSONValue {
        do {
            return try JSONValue(parsing: Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        } catch {
            return .null
        }
    }

    static func jsonLines(_ name: String) -> [JSONValue] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONValue(parsing: String($0)) }
    }

    static func graph(_ file: String) -> Graph? {
        guard let data = try? Data(contentsOf: examples.appendingPathComponent(file)) else { return nil }
        return try? Graph.decode(json: Array(data)).graph
    }

    static var news: Graph? { graph("news.json") }
}

extension Fixtures {
    /// The bytes of a graph in `Examples/`.
    static func exampleBytes(_ file: String) -> [UInt8]? {
        (try? Data(contentsOf: examples.appendingPathComponent(file))).map(Array.init)
    }

    static var kabukit: Graph? { graph("kabukit.json") }
}
