import ArgumentParser
import NavCore
import NavDiagram

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd graph export`: a graph file drawn as a diagram, without a daemon.
struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Work with graph documents without a daemon.",
        subcommands: [Export.self]
    )

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw a graph file (JSON or YAML) as Graphviz DOT, a Mermaid flowchart or SVG.",
            discussion: """
                Prints the diagram, or writes it to --output. The same graph gives the same bytes as \
                GET /v1/graphs/{name}/diagram?format=FORMAT. Exit 1 if the graph is invalid (its \
                problems are printed to standard error as `navd validate` prints them) or the file \
                cannot be read or written; 64 for a usage error.
                """
        )

        @Argument(help: "A graph file (.json, .yaml, .yml).")
        var file: String

        @Option(help: "The diagram's format: \(DiagramFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var format: String

        @Option(name: [.short, .long], help: "Write the diagram to this file instead of standard output.")
        var output: String?

        func validate() throws {
            guard DiagramFormat(rawValue: format) != nil else {
                let known = DiagramFormat.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError("--format must be one of: \(known) (not '\(format)')")
            }
            if output?.isEmpty == true { throw ValidationError("--output needs a path") }
        }

        func run() throws {
            guard let format = DiagramFormat(rawValue: format) else { throw ExitCode(64) }
            let graph: Graph
            do {
                let (decoded, warnings) = try Graph.decode(try GraphFile.read(file))
                for warning in warnings { Self.printError("\(file): \(warning)") }
                graph = decoded
            } catch let error as GraphError {
                for issue in error.issues { Self.printError("\(file): \(issue)") }
                throw ExitCode(1)
            } catch {
                Self.printError("\(file): error: \(error)")
                throw ExitCode(1)
            }
            let bytes = Diagram(graph: graph).rendered(as: format)
            guard let output else {
                StandardStream.output.write(bytes)
                return
            }
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                Self.printError("\(output): error: cannot write the diagram: \(SystemErrorText.describe(error))")
                throw ExitCode(1)
            }
        }

        private static func printError(_ line: String) {
            StandardStream.error.write(line: line)
        }
    }
}
