import ArgumentParser
import NavCore
import NavJSON
import NavSessions

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd validate FILE…`: every problem of every graph, exit 1 if any is an error.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check graph documents (JSON or YAML) and print every problem with its JSON pointer."
    )

    @Argument(help: "Graph files (.json, .yaml, .yml).")
    var files: [String]

    func run() throws {
        var failed = false
        for file in files {
            do {
                let document = try GraphFile.read(file)
                let (graph, warnings) = try Graph.decode(document)
                for warning in warnings { print("\(file): \(warning)") }
                print("\(file): ok: graph '\(graph.name)', \(graph.scenes.count) scenes, \(warnings.count) warning(s)")
            } catch let error as GraphError {
                failed = true
                for issue in error.issues { print("\(file): \(issue)") }
            } catch {
                failed = true
                print("\(file): error: \(error)")
            }
        }
        if failed { throw ExitCode(1) }
    }
}

/// Reads a graph file from disk into a document.
enum GraphFile {
    /// Reads a graph file (`--graph`, `navd validate`, `navd tours`): one over the per-document
    /// bound (``Limits/maxGraphBytes``) is refused before it is read, as an upload over it is
    /// (docs/design.md, "Graphs").
    static func read(_ file: String) throws -> JSONValue {
        let bound = Limits.defaults.maxGraphBytes
        if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int, size > bound {
            throw GraphDocument.ReadError(message: "\(file): too_large: the document is \(size) bytes (limit \(bound))")
        }
        let data: [UInt8]
        do {
            data = try SystemErrorText.contents(of: file)
        } catch {
            throw GraphDocument.ReadError(message: "cannot read \(file): \(error.reason)")
        }
        return try GraphDocument.read(bytes: data, fileName: file)
    }
}
