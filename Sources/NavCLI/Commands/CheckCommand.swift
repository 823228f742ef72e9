import ArgumentParser
import NavCore
import NavHTTPClient
import NavJSON
import NavSessions

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd check CANDIDATE --journeys FILE | --url URL`: recorded sessions replayed offline against
/// a candidate graph (docs/guide.md, "Checking a graph before you ship it").
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Replay recorded sessions (full-form feed records) against a candidate graph and report where they diverge.",
        discussion: """
            Reads full-form feed records as JSON lines from --journeys (what `navd feed --full` \
            prints; a line may also be a CloudEvent whose data is a record, or an array of them), or \
            pages GET /v1/feed?form=full from the daemon at --url with the admin token. Every \
            session of the candidate's graph whose records start at its creation is replayed \
            change by change against the candidate, offline, with its recorded start and context; \
            a step refused, or answered with another path or other events than recorded, makes the \
            session diverge. Sessions that cannot be replayed (creation not in the input, analytics \
            form, another graph, a record that cannot be read, a gap in versions) are counted apart \
            with the reason. The last line is `checked N sessions, M diverge, K not replayed`. Exit \
            0 when none diverges; 1 when some do; 2 on a usage error or a candidate graph that does \
            not validate; 69 when no daemon answers.
            """
    )

    @Argument(help: "The candidate graph document (.json, .yaml, .yml).")
    var candidate: String?

    @Option(help: "A file of feed records as JSON lines (`navd feed --full` writes them; `-` reads standard input).")
    var journeys: String?

    @Option(help: "Read the feed of the daemon at this URL instead (needs --token or NAVD_ADMIN_TOKEN).")
    var url: String?

    @Option(help: "The admin token, for --url (default: NAVD_ADMIN_TOKEN).")
    var token: String?

    @Option(help: "With --url: from this RFC 3339 time, or this long ago (7d, 12h, 30m).")
    var since: String?

    @Option(help: "Seconds to wait for the daemon.")
    var timeout: Int = 30

    /// The exit status of a usage error or a candidate graph that does not validate.
    static let usageStatus: Int32 = 2

    func run() throws {
        let (file, source) = try arguments()
        let graph = try Self.candidateGraph(file)
        var check = JourneyCheck(candidate: graph)
        let workers = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))
        switch source {
        case .journeys(let path):
            let bytes: [UInt8]
            do {
                bytes = try SystemErrorText.contents(of: path == "-" ? "/dev/stdin" : path)
            } catch {
                throw ClientExit.fail(Self.usageStatus, "cannot read \(path): \(error.reason)")
            }
            Self.warn(check.read(lines: bytes, workers: workers), in: path)
        case .feed(let base, let since):
            try readFeed(base, since: since, into: &check)
        }
        let report = check.run(workers: workers)
        for line in report.lines { StandardStream.output.write(line: line) }
        if !report.divergences.isEmpty { throw ExitCode(ClientExit.refused) }
    }

    private enum Source {
        case journeys(String)
        /// The daemon's URL and the `since` to read from (RFC 3339), if any.
        case feed(String, since: String?)
    }

    private func arguments() throws -> (String, Source) {
        func usage(_ message: String) -> ExitCode { ClientExit.fail(Self.usageStatus, message + " (see navd check --help)") }
        guard let candidate else { throw usage("name the candidate graph: navd check CANDIDATE --journeys FILE") }
        switch (journeys, url) {
        case (let file?, nil):
            if since != nil { throw usage("--since reads the daemon's feed: give it with --url, not --journeys") }
            return (candidate, .journeys(file))
        case (nil, let url?):
            return (candidate, .feed(url, since: try since.map(Self.time)))
        case (nil, nil): throw usage("give the recorded journeys: --journeys FILE or --url URL")
        case (.some, .some): throw usage("give --journeys or --url, not both")
        }
    }

    /// `since` as the feed takes it: an RFC 3339 time as given, a duration as now less it.
    static func time(_ text: String) throws -> String {
        if Timestamp.milliseconds(parsing: text) != nil { return text }
        guard let ago = DurationText.milliseconds(text) else {
            throw ClientExit.fail(
                usageStatus, "--since must be an RFC 3339 time (2026-11-27T16:00:00Z) or a duration (7d, 30m), not '\(text)'")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return Timestamp.text(milliseconds: max(0, now - ago))
    }

    /// The candidate, validated as `navd validate` does: its problems printed, exit 2 on an error.
    static func candidateGraph(_ file: String) throws -> GraphVersion {
        do {
            let document = try GraphFile.read(file)
            let (graph, warnings) = try Graph.decode(document)
            return GraphVersion(version: 1, document: document, navigator: Navigator(graph: graph), warnings: warnings)
        } catch let error as GraphError {
            for issue in error.issues { StandardStream.error.write(line: "\(file): \(issue)") }
            throw ExitCode(usageStatus)
        } catch {
            StandardStream.error.write(line: "\(file): error: \(error)")
            throw ExitCode(usageStatus)
        }
    }

    /// Pages the daemon's full-form feed into `check`; a record that cannot be read is named by
    /// its place in the feed.
    private func readFeed(_ base: String, since: String?, into check: inout JourneyCheck) throws {
        let environment = ProcessInfo.processInfo.environment
        let bearer = token ?? environment["NAVD_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let client: DaemonClient
        do {
            client = try DaemonClient(url: base, timeout: max(0, timeout))
        } catch {
            throw ClientExit.fail(Self.usageStatus, error.description)
        }
        var number = 0
        var messages: [String] = []
        _ = try FeedPages(client: client, bearer: bearer, full: true).read(after: nil, since: since, wait: nil) {
            records in
            for record in records {
                number += 1
                do throws(RecordedChange.Unreadable) {
                    for change in try JourneyCheck.records(in: record) { check.add(change) }
                } catch {
                    messages.append("record \(number): \(error.description)")
                    check.addUnreadable(line: number, session: error.session)
                }
            }
        }
        Self.warn(messages, in: "the feed")
    }

    /// The first few messages about input that could not be read, on standard error.
    private static func warn(_ messages: [String], in source: String) {
        let shown = 20
        for message in messages.prefix(shown) { StandardStream.error.write(line: "navd: \(source) \(message)") }
        if messages.count > shown { StandardStream.error.write(line: "navd: \(source): \(messages.count - shown) more unreadable") }
    }
}
