import ArgumentParser
import NavHTTPClient
import NavJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd feed`: the daemon's feed records as JSON lines, a page at a time (docs/guide.md,
/// "Feeding your analytics").
struct FeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed",
        abstract: "Print the daemon's feed records (one per applied change) as JSON lines.",
        discussion: """
            Reads GET /v1/feed with the admin or the backend token, page after page, and prints \
            each record on a line of its own. Without --follow it prints what is retained and \
            exits; with --follow it goes on printing records as changes are applied, until \
            interrupted. The last line on standard error names the cursor to go on from \
            (--after), with --since too while no record at or after that time has come: \
            given both, the feed starts at the first record at or after the time among those \
            after the cursor. Exit 0; 1 when the daemon refuses (the problem is printed); 69 when no \
            daemon answers; 64 usage error.
            """
    )

    @Option(help: "Start after this cursor (a record's cursor, or the one printed last time).")
    var after: String?

    @Option(help: "Start at the first record at or after this RFC 3339 time (2026-11-27T16:00:00Z).")
    var since: String?

    @Flag(help: "Keep printing records as they are written.")
    var follow = false

    @Flag(help: "Every value of every record (the admin token only); else the analytics form.")
    var full = false

    @Option(help: "The daemon's URL (default: NAVD_URL, then http://127.0.0.1:8080).")
    var url: String?

    @Option(help: "The admin or backend token (default: NAVD_ADMIN_TOKEN, then NAVD_BACKEND_TOKEN).")
    var token: String?

    @Option(help: "Seconds to wait for the daemon.")
    var timeout: Int = 30

    func validate() throws {
        if let since, Timestamp.milliseconds(parsing: since) == nil {
            throw ValidationError("--since must be an RFC 3339 time such as 2026-11-27T16:00:00Z, not '\(since)'")
        }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        func setting(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let base = url ?? setting("NAVD_URL") ?? SessionFile.defaultURL
        let bearer = token ?? setting("NAVD_ADMIN_TOKEN") ?? setting("NAVD_BACKEND_TOKEN")
        let wait = 30
        let client: DaemonClient
        do {
            // A long poll holds its answer for up to `wait` seconds.
            client = try DaemonClient(url: base, timeout: timeout == 0 ? 0 : max(timeout, wait + 5))
        } catch {
            throw ClientExit.fail(ClientExit.usage, error.description)
        }
        let (next, since) = try FeedPages(client: client, bearer: bearer, full: full).read(
            after: after, since: since, wait: follow ? wait : nil
        ) { records in
            for record in records { StandardStream.output.write(line: record.jsonString) }
        }
        // Records written meanwhile may be older than a `--since` no record has reached yet.
        StandardStream.error.write(line: "next: \(next ?? "")" + (since.map { " --since \($0)" } ?? ""))
    }
}

/// `GET /v1/feed`, page after page, as `navd feed` and `navd check --url` read it.
struct FeedPages {
    let client: DaemonClient
    let bearer: String?
    /// `form=full`, else the analytics form.
    let full: Bool

    /// Reads from the first record after `after` (a cursor; nil: the oldest retained) that is at
    /// or after `since` (an RFC 3339 time; nil: any), handing each page's records to `each`, until
    /// a page is empty, or with `wait` for ever (long polls of that many seconds).
    /// - Returns: the cursor to go on from, and `since` while no record has reached it (to go on
    ///   with as well).
    func read(after: String?, since: String?, wait: Int?, _ each: ([JSONValue]) throws -> Void) throws -> (
        next: String?, since: String?
    ) {
        let paging = "limit=1000" + (full ? "&form=full" : "")
        var next = after
        // `since` goes with `after` until a record has come: records written meanwhile can be
        // older than it. Once one has, `after` alone reads on (a later record may be a
        // millisecond older than an earlier one, and must not be skipped).
        var since = since
        while true {
            let answer: DaemonClient.Answer
            do {
                let page =
                    paging + (next.map { "&after=" + Driver.escaped($0) } ?? "") + (since.map { "&since=" + Driver.escaped($0) } ?? "")
                answer = try client.send(
                    "GET", "/v1/feed?" + page + (wait.map { "&wait=\($0)" } ?? ""),
                    headers: bearer.map { [("Authorization", "Bearer " + $0)] } ?? [])
            } catch {
                throw ClientExit.fail(ClientExit.unavailable, error.description)
            }
            guard answer.status == 200, let json = answer.json, let records = json["records"]?.arrayValue,
                let cursor = json["next"]?.stringValue
            else {
                let problem = answer.json
                let code = problem?["code"]?.stringValue ?? "HTTP \(answer.status)"
                throw ClientExit.fail(ClientExit.refused, "the daemon refused the feed: \(code): \(problem?["detail"]?.stringValue ?? "")")
            }
            try each(records)
            if !records.isEmpty { since = nil }
            next = cursor
            if records.isEmpty, wait == nil { return (next, since) }
        }
    }
}
