import ArgumentParser
import NavCore
import NavJSON
import NavTours

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd tours FILE`: tours of a graph file that cover its scenes or links, computed without a daemon.
struct ToursCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tours",
        abstract: "Compute tours of a graph file (JSON or YAML) that reach every scene or take every link.",
        discussion: """
            Prints the tours as JSON (the navd-tours/1 document `navd replay` runs; docs/guide.md, "Tours"), \
            or writes them to --output, and a summary on standard error: targets covered, tours, \
            steps against a lower bound. Exit 1 if the graph is invalid (its problems are printed \
            to standard error as `navd validate` prints them), cannot be read, or its start path \
            is refused; 64 for a usage error.
            """
    )

    @Argument(help: "A graph file (.json, .yaml, .yml).")
    var file: String

    @Option(help: "What the tours cover: scenes (every reachable scene shown) or links (every link taken).")
    var cover: String = Coverage.scenes.rawValue

    @Option(name: [.short, .long], help: "Write the tours to this file instead of standard output.")
    var output: String?

    func validate() throws {
        guard Coverage(rawValue: cover) != nil else {
            throw ValidationError("--cover must be scenes or links (not '\(cover)')")
        }
        if output?.isEmpty == true { throw ValidationError("--output needs a path") }
    }

    func run() throws {
        guard let coverage = Coverage(rawValue: cover) else { throw ExitCode(ClientExit.usage) }
        let document: JSONValue
        let graph: Graph
        do {
            document = try GraphFile.read(file)
            graph = try Graph.decode(document).graph
        } catch let error as GraphError {
            for issue in error.issues { Self.printError("\(file): \(issue)") }
            throw ExitCode(ClientExit.refused)
        } catch {
            throw ClientExit.fail(ClientExit.refused, "\(file): error: \(error)")
        }
        let plan: TourDocument
        do {
            plan = try TourPlanner(graph: graph, document: document).plan(coverage)
        } catch {
            throw ClientExit.fail(ClientExit.refused, "\(file): error: \(error.message)")
        }
        let text = ReadableJSON.text(plan.json)
        if let output {
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } catch {
                throw ClientExit.fail(ClientExit.refused, "\(output): error: cannot write the tours: \(SystemErrorText.describe(error))")
            }
        } else {
            StandardStream.output.write(Array(text.utf8))
        }
        if let summary = plan.summary {
            Self.printError(
                "\(file): \(summary.covered) of \(summary.targets) \(coverage.rawValue) in \(summary.tours) tour(s), "
                    + "\(summary.steps) steps (lower bound \(summary.lowerBound))"
                    + (summary.truncated ? "; the search hit its budget" : "")
            )
            for uncovered in summary.uncovered { Self.printError("\(file): not covered: \(uncovered.target): \(uncovered.reason)") }
        }
    }

    static func printError(_ line: String) {
        StandardStream.error.write(line: line)
    }
}
