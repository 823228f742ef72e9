import Foundation
import NavCore
import NavJSON
import NavTours
import Testing

@testable import NavTestSupport

/// `navd tours` and `navd replay`: tours computed from a graph file, replayed against a live daemon.
@Suite struct ToursCLITests {
    static let examples = ["Examples/news.json", "Examples/kabukit.json", "Examples/stopwatch.json"]

    /// Tours of every example, for either coverage, replay against a daemon serving that example.
    @Test(arguments: examples, Coverage.allCases)
    func toursOfTheExamplesReplay(_ example: String, _ cover: Coverage) throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let file = DaemonHarness.packageRoot.appendingPathComponent(example).path
        let tours = cli.directory.appendingPathComponent("tours.json").path
        let made = try cli.run(["tours", file, "--cover", cover.rawValue, "--output", tours])
        #expect(made.status == 0, "\(made)")
        #expect(made.output.isEmpty)
        #expect(
            made.errors.range(
                of: #"^.*: (\d+) of \1 \#(cover.rawValue) in \d+ tour\(s\), (\d+) steps \(lower bound \2\)\n$"#, options: .regularExpression
            ) != nil, "\(made)")
        let document = try TourDocument(json: try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: tours)))))
        #expect(document.cover == cover && !document.tours.isEmpty)

        let daemon = try DaemonHarness(graphs: [example])
        let replayed = try cli.run(["replay", tours, "--url", "http://127.0.0.1:\(daemon.port)"])
        #expect(replayed.status == 0, "\(replayed)")
        #expect(replayed.errors.isEmpty)
        #expect(
            replayed.output.hasSuffix(
                "tour(s), \(document.tours.reduce(0) { $0 + $1.steps.count }) step(s) of graph '\(document.graphName)': no difference\n"),
            "\(replayed)")
    }

    /// Standard output is the document; the same graph gives the same bytes.
    @Test func toursPrintsTheDocument() throws {
        let first = try CLIProcess.navd(["tours", "Examples/news.json"])
        #expect(first.status == 0)
        let again = try CLIProcess.navd(["tours", "Examples/news.json"])
        #expect(first.output == again.output)
        let document = try TourDocument(json: try JSONValue(parsing: first.output))
        #expect(document.graphName == "news" && document.cover == .scenes && document.context == ["user": "tour"])
    }

    /// A tour that expects what the daemon does not do: 1, and the step, the expectation and what came.
    @Test func aMismatchIsReportedWithItsStep() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let made = try CLIProcess.navd(["tours", "Examples/news.json", "--cover", "links"])
        var document = try TourDocument(json: try JSONValue(parsing: made.output))
        let daemon = try DaemonHarness()
        let url = "http://127.0.0.1:\(daemon.port)"
        let tours = cli.directory.appendingPathComponent("tours.json")

        let original = try #require(document.tours.first?.steps.first)
        document.tours[0].steps[0].path = original.path + "/nosuch"
        try ReadableJSON.text(document.json).write(to: tours, atomically: true, encoding: .utf8)
        let wrongPath = try cli.run(["replay", tours.path, "--url", url])
        #expect(wrongPath.status == 1)
        #expect(
            wrongPath.errors
                == "navd: tour 1, step 1 (\(original.intent)): expected path \(original.path)/nosuch, got path \(original.path)\n",
            "\(wrongPath)")

        document.tours[0].steps[0].path = original.path
        document.tours[0].steps[0].events.removeLast()
        try ReadableJSON.text(document.json).write(to: tours, atomically: true, encoding: .utf8)
        let wrongEvents = try cli.run(["replay", tours.path, "--url", url])
        #expect(wrongEvents.status == 1)
        #expect(wrongEvents.errors.contains("got events [") && wrongEvents.errors.contains("▶transitionEnd"), "\(wrongEvents)")

        document.tours[0].steps[0].events = original.events
        document.tours[0].steps.insert(TourStep(intent: .exit, path: "/top", events: []), at: 0)
        try ReadableJSON.text(document.json).write(to: tours, atomically: true, encoding: .utf8)
        let refused = try cli.run(["replay", tours.path, "--url", url])
        #expect(refused.status == 1)
        #expect(
            refused.errors
                == "navd: tour 1, step 1 (exit): expected path /top, got refused: stack_underflow: the root screen cannot be exited\n",
            "\(refused)")
    }

    /// A daemon serving another version of the graph (same name, other content) is named as such.
    @Test func anotherGraphVersionIsNamed() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let tours = cli.directory.appendingPathComponent("tours.json").path
        #expect(
            try cli.run(["tours", DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json").path, "-o", tours]).status == 0)
        var news = try JSONValue(
            parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
        guard case .object(var members) = news, case .object(var scenes)? = members["scenes"] else {
            Issue.record("news.json")
            return
        }
        scenes["extra"] = .object([:])
        members["scenes"] = .object(scenes)
        news = .object(members)
        let changed = cli.directory.appendingPathComponent("news.json")
        var writer = JSONWriter()
        writer.write(news)
        try Data(writer.finish()).write(to: changed)
        // The harness takes graph paths relative to the package root.
        let up = String(repeating: "../", count: DaemonHarness.packageRoot.standardizedFileURL.pathComponents.count - 1)
        let daemon = try DaemonHarness(graphs: [up + changed.standardizedFileURL.path.dropFirst()])
        let run = try cli.run(["replay", tours, "--url", "http://127.0.0.1:\(daemon.port)"])
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.errors.hasPrefix("navd: the daemon serves graph 'news' version 1 (fnv1a64:"), "\(run)")
        #expect(run.errors.contains("not the graph these tours were computed from"), "\(run)")

        let other = try DaemonHarness(graphs: ["Examples/kabukit.json"])
        let missing = try cli.run(["replay", tours, "--url", "http://127.0.0.1:\(other.port)"])
        #expect(missing.status == 1)
        #expect(missing.errors == "navd: the daemon does not serve graph 'news' (not_found)\n", "\(missing)")
    }

    /// Bad input: one line and a non-zero status for each.
    @Test func badInput() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let broken = cli.directory.appendingPathComponent("broken.json")
        try #"{"name": "bad name", "start": "/a", "scenes": {"a": {"links": {"go": {"path": "^/missing"}}}}}"#.write(
            to: broken, atomically: true, encoding: .utf8)
        let invalid = try cli.run(["tours", broken.path])
        #expect(invalid.status == 1 && invalid.output.isEmpty)
        #expect(invalid.errors.contains("\(broken.path): error: /name: invalid_name:"), "\(invalid)")
        #expect(invalid.errors.contains("\(broken.path): error: /scenes/a/links/go/path: unknown_scene:"), "\(invalid)")

        let malformed = cli.directory.appendingPathComponent("malformed.json")
        try #"{"name": "#.write(to: malformed, atomically: true, encoding: .utf8)
        let unparsable = try cli.run(["tours", malformed.path])
        #expect(unparsable.status == 1 && unparsable.errorLines.count == 1, "\(unparsable)")

        let missing = try cli.run(["tours", "/nonexistent/\(UUID().uuidString).json"])
        #expect(missing.status == 1 && missing.errorLines.count == 1 && missing.errors.contains("cannot read"), "\(missing)")

        let usage = try cli.run(["tours", broken.path, "--cover", "everything"])
        #expect(usage.status == 64)

        let unwritable = try cli.run([
            "tours", DaemonHarness.packageRoot.appendingPathComponent("Examples/kabukit.json").path, "-o",
            "/nonexistent/\(UUID().uuidString)/t.json"
        ])
        #expect(
            unwritable.status == 1 && unwritable.errorLines.count == 1 && unwritable.errors.contains("cannot write the tours"),
            "\(unwritable)")

        let notTours = try cli.run(["replay", broken.path, "--url", "http://127.0.0.1:1"])
        #expect(notTours.status == 65 && notTours.errorLines.count == 1, "\(notTours)")
        #expect(notTours.errors.hasPrefix("navd: \(broken.path): not a tours document: /format:"), "\(notTours)")
        let notJSON = try cli.run(["replay", malformed.path])
        #expect(notJSON.status == 65 && notJSON.errorLines.count == 1, "\(notJSON)")

        let tours = cli.directory.appendingPathComponent("tours.json")
        try CLIProcess.navd(["tours", "Examples/kabukit.json"]).output.write(to: tours, atomically: true, encoding: .utf8)
        let down = try cli.run(["replay", tours.path, "--url", "http://127.0.0.1:\(try DaemonHarness.freePort())"])
        #expect(down.status == 69 && down.errorLines.count == 1 && down.errors.contains("cannot connect"), "\(down)")
    }

    /// A YAML graph: its tours replay against a daemon that read the same file (the fingerprint
    /// is the document's content, however it was written).
    @Test func aYAMLGraphReplays() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let yaml = cli.directory.appendingPathComponent("tiny.yaml")
        try """
        name: tiny
        start: /a
        scenes:
          a:
            links:
              go: {path: "b(n={n})"}
              pop: {path: "!c"}
          b:
            params: {n: {type: int, default: 3}}
          c: {}
        """.write(to: yaml, atomically: true, encoding: .utf8)
        let tours = cli.directory.appendingPathComponent("tours.json").path
        let made = try cli.run(["tours", yaml.path, "--cover", "links", "-o", tours])
        #expect(made.status == 0, "\(made)")
        let up = String(repeating: "../", count: DaemonHarness.packageRoot.standardizedFileURL.pathComponents.count - 1)
        let daemon = try DaemonHarness(graphs: [up + yaml.standardizedFileURL.path.dropFirst()])
        let run = try cli.run(["replay", tours, "--url", "http://127.0.0.1:\(daemon.port)"])
        #expect(run.status == 0, "\(run)")
    }

    /// A daemon run with --backend-token: creating a session needs it, for replay as for `session new`.
    @Test func theBackendTokenCreatesSessions() throws {
        let cli = try CLIProcess()
        defer { cli.remove() }
        let tours = cli.directory.appendingPathComponent("tours.json").path
        #expect(
            try cli.run(["tours", DaemonHarness.packageRoot.appendingPathComponent("Examples/kabukit.json").path, "-o", tours]).status == 0)
        let daemon = try DaemonHarness(graphs: ["Examples/kabukit.json"], arguments: ["--backend-token", "backend-secret-0123456789"])
        let url = "http://127.0.0.1:\(daemon.port)"
        let refused = try cli.run(["replay", tours, "--url", url])
        #expect(refused.status == 1)
        #expect(
            refused.errors.hasPrefix("navd: tour 1, start (new session): expected path /A_root, got refused: unauthorized: "), "\(refused)")
        let allowed = try cli.run(["replay", tours, "--url", url, "--backend-token", "backend-secret-0123456789"])
        #expect(allowed.status == 0, "\(allowed)")
        let session = try cli.run(["session", "new", "--url", url])
        #expect(session.status == 1 && session.errors.hasPrefix("navd: unauthorized: "), "\(session)")
        let withToken = try CLIProcess(environment: ["NAVD_BACKEND_TOKEN": "backend-secret-0123456789"])
        defer { withToken.remove() }
        let created = try withToken.run(["session", "new", "--url", url])
        #expect(created.status == 0, "\(created)")
        #expect(try withToken.run(["session", "link", "a"]).status == 0, "the session's own token drives it")
    }

    /// docs/guide.md's table of tour sizes is what `navd tours` computes today.
    @Test func theReadmeTableIsTrue() throws {
        let readme = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("docs/guide.md"), encoding: .utf8)
        var rows = 0
        for example in Self.examples {
            let (graph, document) = try Self.example(example)
            for cover in Coverage.allCases {
                let summary = try #require(try TourPlanner(graph: graph, document: document).plan(cover).summary)
                let name = (example as NSString).lastPathComponent
                let row =
                    "| `\(name)` | \(cover.rawValue) | \(summary.covered) of \(summary.targets) | \(summary.tours) | \(summary.steps) | \(summary.lowerBound) |"
                #expect(readme.contains(row), "docs/guide.md has no row \(row)")
                rows += 1
            }
        }
        #expect(rows == 6)
    }

    static func example(_ file: String) throws -> (Graph, JSONValue) {
        let document = try JSONValue(parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent(file))))
        return (try Graph.decode(document).graph, document)
    }
}
