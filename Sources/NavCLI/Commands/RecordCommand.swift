import ArgumentParser
import NavHTTPClient
import NavJSON
import NavSessions
import NavTours

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd record SESSION`: a session's history as a tours document of one tour, which `navd replay`
/// plays against another daemon (docs/guide.md, "From a real session to a regression test").
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Write a session's history as a tours document (cover \"recorded\") that `navd replay` runs.",
        discussion: """
            Reads GET /v1/sessions/{id}/history page after page, up to the session's current \
            version or --to, and prints one tours document on standard output: one tour that \
            creates a session as this one was created (its start path and context) and then \
            makes each of its changes (links, paths, batches, commands, confirmations, upgrades…), \
            expecting the path and the event types the session got. The graph's fingerprint is \
            that of the graph version the session was created on. The session is SESSION, else \
            NAVD_SESSION, else the one remembered in ./.navd/session; the token is --token, else \
            NAVD_TOKEN, else the remembered session's, else NAVD_ADMIN_TOKEN (the session's \
            token, its watch token or the admin token may read its history). Exit 0 written; 1 \
            when the daemon refuses (no such session, the wrong token, the feed off), when the \
            session's creation is no longer retained, or when --to is above its version; 69 when \
            no daemon answers; 64 usage error.
            """
    )

    @Argument(help: "The session id (default: NAVD_SESSION, then ./.navd/session).")
    var session: String?

    @Option(help: "Record up to this version (default: the session's current version).")
    var to: Int?

    @Option(help: "The daemon's URL (default: NAVD_URL, then the remembered session's, then http://127.0.0.1:8080).")
    var url: String?

    @Option(help: "A token that reads the session's history (default: NAVD_TOKEN, the remembered session's, then NAVD_ADMIN_TOKEN).")
    var token: String?

    @Option(help: "Seconds to wait for the daemon.")
    var timeout: Int = 30

    func validate() throws {
        if let to, to < 1 { throw ValidationError("--to must be a version, at least 1 (not \(to))") }
    }

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let driver = try Driver(
            url: url, session: session, token: token, timeout: timeout, lastToken: environment["NAVD_ADMIN_TOKEN"])
        // Each record read as every replay of one reads it (``RecordedChange``).
        var changes: [RecordedChange] = []
        for record in try history(driver) {
            do {
                changes.append(try RecordedChange(record: record))
            } catch {
                let version = record["version"]?.intValue ?? 0
                throw ClientExit.fail(
                    ClientExit.refused,
                    version == 1
                        ? "the creation record of session \(driver.id) is not one navd record can read: \(error)"
                        : "the record of version \(version) of session \(driver.id): \(error)")
            }
        }
        guard let creation = changes.first, case .create(let start, let context)? = creation.step, let startPath = creation.path
        else {
            throw ClientExit.fail(ClientExit.refused, "the creation record of session \(driver.id) is not one navd record can read")
        }
        let graph = creation.graphName
        let graphVersion = creation.graphVersion
        let last = changes.last?.version ?? 1
        var steps: [TourStep] = []
        for change in changes.dropFirst() {
            let intent: TourIntent
            switch change.step {
            case .intent(let asked, let confirmed)?: intent = confirmed ? .confirm(asked) : .apply(asked)
            case .upgrade(let version)?: intent = .upgrade(version: version)
            case .create?, .end?, nil:
                throw ClientExit.fail(
                    ClientExit.refused, "the record of version \(change.version) of session \(driver.id) is no change a tour can make")
            }
            steps.append(TourStep(intent: intent, path: change.path ?? "", events: change.events))
        }
        let tour = Tour(startPath: startPath, startEvents: creation.events, request: start, steps: steps)
        let document = TourDocument(
            graphName: graph, fingerprint: try fingerprint(driver, graph: graph, version: graphVersion), cover: nil,
            context: context, tours: [tour],
            recording: TourDocument.Recording(session: driver.id, graphVersion: graphVersion, to: last)
        )
        StandardStream.output.write(Array(ReadableJSON.text(document.json).utf8))
        StandardStream.error.write(
            line:
                "recorded session \(driver.id): versions 1 to \(last) (\(steps.count) step(s)) of graph '\(graph)' version \(graphVersion)")
    }

    /// The session's records from its creation to `--to` (or its current version), end record left out.
    private func history(_ driver: Driver) throws -> [JSONValue] {
        var records: [JSONValue] = []
        var after = 0
        while true {
            let answer = try driver.send("GET", driver.sessionPath + "/history?after=\(after)&limit=1000")
            if answer.status == 404, answer.json?["code"]?.stringValue == "not_found" {
                throw ClientExit.fail(
                    ClientExit.refused,
                    "session \(driver.id) has no history to record: the daemon keeps none (its feed is off, --feed-retention 0)")
            }
            let page = try driver.accept(answer)
            guard let changes = page["changes"]?.arrayValue, let next = page["next"]?.intValue else {
                throw ClientExit.fail(ClientExit.unavailable, "the daemon's history answer has no changes and next")
            }
            if after == 0 {
                guard let oldest = page["oldest"]?.intValue else {
                    throw ClientExit.fail(ClientExit.refused, "cannot record session \(driver.id): none of its records is retained")
                }
                guard oldest == 1 else {
                    throw ClientExit.fail(
                        ClientExit.refused,
                        "cannot record session \(driver.id): its creation (version 1) is no longer retained (the oldest record kept is version \(oldest)); a recording starts at the creation"
                    )
                }
            }
            for record in changes {
                guard record["kind"]?.stringValue != "end", let version = record["version"]?.intValue else {
                    return try upTo(records, driver)
                }
                if let to, version > to { return records }
                records.append(record)
            }
            if changes.isEmpty || next == after { return try upTo(records, driver) }
            after = next
        }
    }

    /// `records` when they reach `--to`.
    private func upTo(_ records: [JSONValue], _ driver: Driver) throws -> [JSONValue] {
        let last = records.last?["version"]?.intValue ?? 0
        if let to, to > last {
            throw ClientExit.fail(ClientExit.refused, "session \(driver.id) is at version \(last): --to \(to) is above it")
        }
        return records
    }

    /// The fingerprint of graph `name` version `version`, as the daemon serves it.
    private func fingerprint(_ driver: Driver, graph name: String, version: Int) throws -> String {
        let answer = try driver.send("GET", "/v1/graphs/\(Driver.escaped(name))?version=\(version)", headers: [])
        guard answer.status == 200, let document = answer.json?["document"] else {
            let code = answer.json?["code"]?.stringValue ?? "HTTP \(answer.status)"
            throw ClientExit.fail(
                ClientExit.refused,
                "version \(version) of graph '\(name)', which the session was created on, cannot be read (\(code)): its fingerprint is not known"
            )
        }
        return GraphFingerprint.of(document)
    }
}
