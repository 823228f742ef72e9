import Foundation
import NavCore
import NavDiagram
import NavSessions
import Testing

@testable import NavTestSupport

/// `navd`'s commands other than `serve`, run as the real binary.
@Suite struct CLITests {
    typealias Run = CLIProcess.Run

    /// Runs `navd` with `arguments` from the package root and waits (at most 30 s).
    static func navd(_ arguments: [String]) throws -> Run {
        try CLIProcess.navd(arguments)
    }

    @Test func validateAcceptsTheExampleGraphs() throws {
        let run = try Self.navd(["validate", "Examples/news.json", "Examples/kabukit.json", "Examples/stopwatch.json"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("Examples/news.json: ok: graph 'news', 15 scenes"))
        #expect(run.output.contains("Examples/stopwatch.json: ok: graph 'stopwatch', 1 scenes"))
        #expect(run.output.contains("Examples/kabukit.json: ok: graph 'kabukit'"))
        // A scene only deep links reach (news.json's tab bar) is no mistake: nothing is warned about.
        #expect(!run.output.contains("warning:"), "\(run.output)")
    }

    @Test func validatePrintsEveryProblemOfABrokenGraphWithItsPointer() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("navd-broken-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let broken = """
            {"name": "bad name", "start": "/nosuch", "extra": 1,
             "scenes": {"up": {}, "home": {"links": {"go": {"path": "show(id={id"}}},
                        "bar": {"container": "tabs", "tabs": ["zzz"]},
                        "typed": {"params": {"p": {"type": "float"}}}},
             "links": {"back": {"path": "^/missing"}}}
            """
        try broken.write(to: file, atomically: true, encoding: .utf8)
        let run = try Self.navd(["validate", file.path])
        #expect(run.status == 1)
        let expected: [(pointer: String, code: String)] = [
            ("/extra", "unknown_field"), ("/name", "invalid_name"), ("/start", "invalid_start"),
            ("/scenes/up", "reserved_name"), ("/scenes/home/links/go/path", "invalid_template"),
            ("/scenes/bar/tabs/0", "unknown_scene"), ("/scenes/typed/params/p/type", "invalid_param_schema"),
            ("/links/back/path", "unknown_scene")
        ]
        let lines = run.output.split(separator: "\n").map(String.init)
        for (pointer, code) in expected {
            #expect(
                lines.contains { $0.hasPrefix("\(file.path): error: \(pointer): \(code):") }, "no \(code) at \(pointer) in:\n\(run.output)")
        }
        #expect(lines.filter { $0.contains(": error: ") }.count == expected.count, "\(run.output)")
        #expect(!run.output.contains(": ok: "))
    }

    @Test func validateFailsOnUnreadableFilesButChecksTheRest() throws {
        let missing = "/nonexistent/\(UUID().uuidString).json"
        let run = try Self.navd(["validate", missing, "Examples/news.json"])
        #expect(run.status == 1)
        #expect(run.output.contains("\(missing): error:"))
        #expect(run.output.contains("Examples/news.json: ok:"))
    }

    @Test(arguments: [
        ("/top/list_news(category=3)", "/top/list_news(category=3)"),
        ("/top/x(b=2,a=1)", "/top/x(a=1,b=2)"),
        ("^/top!/list_coupon", "^/top!/list_coupon")
    ])
    func pathParsePrintsTheCanonicalForm(_ path: String, _ canonical: String) throws {
        let run = try Self.navd(["path", "parse", path])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output == canonical + "\n")
    }

    @Test func pathParseReportsTheOffsetOfAnInvalidPath() throws {
        let run = try Self.navd(["path", "parse", "/top("])
        #expect(run.status == 1)
        #expect(run.output.hasPrefix("invalid_path at offset 4"), "\(run.output)")
    }

    @Test func pathResolveAppliesARelativePath() throws {
        let run = try Self.navd(["path", "resolve", "--from", "/top", "../profile"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output == "/profile\n")
        let deeper = try Self.navd(["path", "resolve", "--from", "/top/list_news(category=0)", "show_news(id=4)"])
        #expect(deeper.output == "/top/list_news(category=0)/show_news(id=4)\n")
    }

    @Test func healthIsZeroAgainstARunningDaemonAndOneAgainstAClosedPort() throws {
        let daemon = try DaemonHarness()
        let healthy = try Self.navd(["health", "--url", "http://127.0.0.1:\(daemon.port)/healthz"])
        #expect(healthy.status == 0, "\(healthy.output)\(healthy.errors)")
        #expect(try daemon.stop() == 0)

        let closed = try Self.navd(["health", "--url", "http://127.0.0.1:\(try DaemonHarness.freePort())/healthz", "--timeout", "1"])
        #expect(closed.status == 1)
        #expect(closed.output.hasPrefix("unhealthy"))
    }

    @Test func versionIsPrinted() throws {
        let run = try Self.navd(["--version"])
        #expect(run.status == 0)
        let version = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+"#, options: .regularExpression) != nil, "\(run.output)")
        let spec = try OpenAPIValidator.shared.get()
        #expect(spec.document["info"]?["version"] == .string(version), "navd --version and openapi.yaml info.version differ")
    }
}

/// `navd graph export`: a graph file drawn without a daemon.
@Suite struct GraphExportCLITests {
    static func graph(_ file: String) throws -> Graph {
        let bytes = try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent(file))
        return try Graph.decode(json: Array(bytes)).graph
    }

    /// Each format on standard output: the bytes the diagram route serves.
    @Test(arguments: DiagramFormat.allCases)
    func exportPrintsTheDiagram(_ format: DiagramFormat) throws {
        let run = try CLITests.navd(["graph", "export", "Examples/news.json", "--format", format.rawValue])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.isEmpty)
        #expect(Array(run.output.utf8) == Diagram(graph: try Self.graph("Examples/news.json")).rendered(as: format))
    }

    @Test func exportReadsYAMLAndWritesTheOutputFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let yaml = directory.appendingPathComponent("graph.yaml")
        try "name: tiny\nstart: /a\nscenes:\n  a:\n    links:\n      go: {path: \"!b\"}\n  b: {}\n".write(
            to: yaml, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("graph.dot")
        let run = try CLITests.navd(["graph", "export", yaml.path, "--format", "dot", "--output", output.path])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.isEmpty)
        let written = try String(contentsOf: output, encoding: .utf8)
        #expect(written.hasPrefix("digraph \"tiny\" {\n"))
        #expect(written.contains(#"  "a" -> "b" [label="go\n!b", class="edge link segue-modal", style="dashed"];"#))

        let unwritable = try CLITests.navd([
            "graph", "export", yaml.path, "--format", "mermaid", "-o", "/nonexistent/\(UUID().uuidString)/x.mmd"
        ])
        #expect(unwritable.status == 1)
        #expect(unwritable.errors.contains("error: cannot write the diagram"), "\(unwritable.errors)")
    }

    /// An invalid graph: 1, its problems on standard error as `navd validate` prints them, nothing drawn.
    @Test func anInvalidGraphIsOneWithEveryProblem() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("navd-export-broken-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try #"{"name": "bad name", "start": "/a", "scenes": {"a": {"links": {"go": {"path": "^/missing"}}}}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        let run = try CLITests.navd(["graph", "export", file.path, "--format", "dot"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errors.contains("\(file.path): error: /name: invalid_name:"), "\(run.errors)")
        #expect(run.errors.contains("\(file.path): error: /scenes/a/links/go/path: unknown_scene:"), "\(run.errors)")

        let missing = try CLITests.navd(["graph", "export", "/nonexistent/\(UUID().uuidString).json", "--format", "dot"])
        #expect(missing.status == 1)
        #expect(missing.errors.contains(": error: cannot read"), "\(missing.errors)")
    }

    /// Usage errors are 64 (EX_USAGE), before the file is read.
    @Test(arguments: [
        ["graph", "export", "Examples/news.json"],
        ["graph", "export", "Examples/news.json", "--format", "png"],
        ["graph", "export", "Examples/news.json", "--format", "DOT"],
        ["graph", "export", "--format", "dot"],
        ["graph", "export", "Examples/news.json", "--format", "dot", "--output", ""],
        ["graph", "export", "Examples/news.json", "--format", "dot", "--bogus"]
    ])
    func usageErrorsAreSixtyFour(_ arguments: [String]) throws {
        let run = try CLITests.navd(arguments)
        #expect(run.status == 64, "\(arguments): \(run.status) \(run.errors)")
        #expect(run.output.isEmpty)
    }
}
