import Foundation
import NavCore
import Testing

@testable import NavDiagram

/// Debian's Graphviz draws every DOT navd writes (`make test-deps` installs `graphviz`): the
/// examples, generated graphs and names that are DOT keywords or full of escapes.
@Suite struct GraphvizTests {
    /// `dot` on the PATH (or in /usr/bin).
    static var dot: URL? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin"]
        return directories.map { URL(fileURLWithPath: $0).appendingPathComponent("dot") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `dot -Tsvg` on `input`: its exit status, standard output and standard error.
    static func run(_ dot: URL, _ input: [UInt8]) throws -> (status: Int32, output: String, errors: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-graphviz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("graph.dot")
        let svg = directory.appendingPathComponent("graph.svg")
        let errors = directory.appendingPathComponent("errors.txt")
        try Data(input).write(to: source)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = dot
        process.arguments = ["-Tsvg", "-o", svg.path, source.path]
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus,
            (try? String(contentsOf: svg, encoding: .utf8)) ?? "",
            (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        )
    }

    /// Skipped, saying why, where `dot` is missing, unless `CI=true` (CI installs it, and the
    /// test then fails on its absence below).
    @Test(
        .enabled(
            if: GraphvizTests.dot != nil || ProcessInfo.processInfo.environment["CI"] == "true",
            "Graphviz's `dot` is not installed: `make test-deps` installs it; CI=true requires it"
        ),
        arguments: DOTRendererTests.graphs().map(\.0)
    )
    func graphvizDrawsTheDOT(_ name: String) throws {
        guard let dot = Self.dot else {
            Issue.record("Graphviz's `dot` is not installed: `make test-deps` installs it (apt-get install graphviz)")
            return
        }
        let graph = try #require(DOTRendererTests.graphs().first { $0.0 == name }?.1)
        let diagram = Diagram(graph: graph)
        let run = try Self.run(dot, diagram.rendered(as: .dot))
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.isEmpty, "\(run.errors)")
        #expect(run.output.contains("<svg"))
        // One node per scene (and the any-screen node), one edge per diagram edge.
        let nodes = run.output.components(separatedBy: #"<g id="node"#).count - 1
        let edges = run.output.components(separatedBy: #"<g id="edge"#).count - 1
        #expect(nodes == diagram.scenes.count + (diagram.hasGlobalLinks ? 1 : 0))
        #expect(edges == diagram.edges.count)
    }
}
