import ArgumentParser
import NavCore

/// `navd path parse|resolve`: the path grammar from the command line.
struct PathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path",
        abstract: "Parse or resolve DeepTransition paths and print their canonical form.",
        subcommands: [Parse.self, Resolve.self]
    )

    struct Parse: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the canonical form of a path expression.")

        @Argument(help: "A path such as '/top/list_news(category=3)' or '..!login'.")
        var path: String

        func run() throws {
            do {
                print(try PathExpression.parse(path).description)
            } catch {
                print("invalid_path at offset \(error.offset): \(error.reason)")
                throw ExitCode(1)
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resolve a path expression against a base path.")

        @Option(name: .long, help: "The current path (a canonical stage path).")
        var from: String = ""

        @Argument(help: "The path expression to resolve.")
        var path: String

        func run() throws {
            do {
                let base = try Path.parse(from)
                print(base.resolving(try PathExpression.parse(path)).description)
            } catch {
                print("invalid_path at offset \(error.offset): \(error.reason)")
                throw ExitCode(1)
            }
        }
    }
}
