import ArgumentParser
import NavCore
import NavHTTPClient
import NavJSON
import NavTours
import NavWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `navd replay TOURS`: runs tours against a live daemon, one new session per tour.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run tours (from `navd tours`) against a running daemon; exit 1 on the first difference.",
        discussion: """
            Checks first that the daemon serves the graph the tours were computed from (by its \
            fingerprint). Each tour creates a session (with the tours' context), applies each step \
            and compares the canonical path and the event types with the expected ones, then \
            deletes the session. Exit 0 when every step agrees; 1 on the first difference (printed \
            as: tour, step, expected, got) or when the daemon serves another version of the graph; \
            65 when TOURS is not a tours document; 69 when no daemon answers; 64 usage error.
            """
    )

    @Argument(help: "A tours file, as `navd tours` writes it.")
    var tours: String

    @Option(help: "The daemon's URL (default: NAVD_URL, then http://127.0.0.1:8080).")
    var url: String?

    @Option(help: "The token creating a session needs when the daemon runs with --backend-token (default: NAVD_BACKEND_TOKEN).")
    var backendToken: String?

    @Option(help: "Seconds to wait for the daemon.")
    var timeout: Int = 30

    func run() throws {
        let document = try readTours()
        let environment = ProcessInfo.processInfo.environment
        let base = url ?? environment["NAVD_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? SessionFile.defaultURL
        let client: DaemonClient
        do {
            client = try DaemonClient(url: base, timeout: max(0, timeout))
        } catch {
            throw ClientExit.fail(ClientExit.usage, error.description)
        }
        var replay = Replay(client: client, document: document, backendToken: backendToken ?? environment["NAVD_BACKEND_TOKEN"])
        try replay.checkGraph(version: nil)
        var steps = 0
        for (index, tour) in document.tours.enumerated() {
            try replay.run(tour, number: index + 1)
            steps += tour.steps.count
            Driver.emit(
                "tour \(index + 1): \(tour.steps.count) step(s) as expected (\(tour.startPath) → \(tour.steps.last?.path ?? tour.startPath))"
            )
        }
        Driver.emit("replayed \(document.tours.count) tour(s), \(steps) step(s) of graph '\(document.graphName)': no difference")
    }

    private func readTours() throws -> TourDocument {
        let data: [UInt8]
        do {
            data = try SystemErrorText.contents(of: tours)
        } catch {
            throw ClientExit.fail(ClientExit.badInput, "\(tours): cannot read the tours file: \(error.reason)")
        }
        do {
            return try TourDocument(json: try JSONValue(parsing: Array(data)))
        } catch let error as TourDocumentError {
            throw ClientExit.fail(ClientExit.badInput, "\(tours): not a tours document: \(error)")
        } catch {
            throw ClientExit.fail(ClientExit.badInput, "\(tours): not JSON: \(error)")
        }
    }

    /// One replay: the daemon, the tours, and the graph versions found to match.
    struct Replay {
        let client: DaemonClient
        let document: TourDocument
        let backendToken: String?
        var matchingVersions: Set<Int> = []

        /// Fails unless the daemon's graph (its latest, or `version`) is the tours' graph; for a
        /// recorded document, another graph is a warning (once per version) and the replay goes on.
        mutating func checkGraph(version: Int?) throws {
            if let version, matchingVersions.contains(version) { return }
            guard let graph = try graph(version: version), let served = graph["document"], let number = graph["version"]?.intValue
            else {
                throw ClientExit.fail(ClientExit.refused, "the daemon does not serve graph '\(document.graphName)' (not_found)")
            }
            let fingerprint = GraphFingerprint.of(served)
            if fingerprint != document.fingerprint, document.cover == nil {
                StandardStream.error.write(
                    line:
                        "navd: warning: the daemon serves graph '\(document.graphName)' version \(number) (\(fingerprint)), not the graph the session was recorded on (\(document.fingerprint)): replaying all the same"
                )
            } else if fingerprint != document.fingerprint {
                throw ClientExit.fail(
                    ClientExit.refused,
                    "the daemon serves graph '\(document.graphName)' version \(number) (\(fingerprint)), not the graph these tours were computed from (\(document.fingerprint)): compute the tours again, or replay against a daemon serving that graph"
                )
            }
            matchingVersions.insert(number)
        }

        /// `GET /v1/graphs/{name}` (of `version`, else the latest); `nil` when the daemon has no such graph or version.
        func graph(version: Int?) throws -> JSONValue? {
            let path = "/v1/graphs/\(Driver.escaped(document.graphName))" + (version.map { "?version=\($0)" } ?? "")
            let answer = try send("GET", path, body: nil, token: nil)
            if answer.status == 404 { return nil }
            guard answer.status == 200, let graph = answer.json else {
                let code = answer.json?["code"]?.stringValue ?? "HTTP \(answer.status)"
                throw ClientExit.fail(ClientExit.refused, "the daemon does not serve graph '\(document.graphName)' (\(code))")
            }
            return graph
        }

        mutating func run(_ tour: Tour, number: Int) throws {
            var body: [String: JSONValue] = ["graph": .string(document.graphName), "context": .object(tour.context ?? document.context)]
            if let request = tour.request { body["start"] = .string(request) }
            let created = try send("POST", "/v1/sessions", body: .object(body), token: backendToken.flatMap { $0.isEmpty ? nil : $0 })
            let view = try observe(
                created, tour: number, step: 0, intent: "new session" + (tour.request.map { " at \($0)" } ?? ""), path: tour.startPath,
                events: tour.startEvents)
            guard let id = view["id"]?.stringValue, let token = view["token"]?.stringValue else {
                throw ClientExit.fail(ClientExit.unavailable, "the daemon's answer has no session id and token")
            }
            if let version = view["graph"]?["version"]?.intValue { try checkGraph(version: version) }
            let session = "/v1/sessions/\(Driver.escaped(id))"
            defer { _ = try? send("DELETE", session, body: nil, token: token) }
            for (index, step) in tour.steps.enumerated() {
                let place = "tour \(number), step \(index + 1) (\(step.intent))"
                let answer: DaemonClient.Answer
                switch step.intent {
                case .apply(let intent):
                    let route = Self.route(of: intent, session: session)
                    answer = try send(route.method, route.path, body: route.body, token: token)
                case .confirm(let intent):
                    let route = Self.route(of: intent, session: session)
                    let asked = try send(route.method, route.path, body: route.body, token: token)
                    guard asked.status == 409, let confirmation = asked.json?["confirmation"]?["token"]?.stringValue else {
                        throw ClientExit.fail(
                            ClientExit.refused, "\(place): expected 409 confirmation_required, got \(Self.outcome(of: asked))")
                    }
                    answer = try send("POST", session + "/confirm", body: ["token": .string(confirmation)], token: token)
                case .upgrade(let version):
                    if let version, try graph(version: version) == nil {
                        StandardStream.error.write(
                            line:
                                "navd: warning: \(place): the daemon has no version \(version) of graph '\(document.graphName)'; step skipped"
                        )
                        continue
                    }
                    answer = try send(
                        "POST", session + "/upgrade", body: .object(version.map { ["version": .int($0)] } ?? [:]), token: token)
                }
                _ = try observe(
                    answer, tour: number, step: index + 1, intent: step.intent.description, path: step.path, events: step.events)
            }
        }

        /// The route a batch item (or a batch) has of its own, and the body it takes
        /// (docs/api.md): the same change as the item sent in a batch of one.
        static func route(of intent: Intent, session: String) -> (method: String, path: String, body: JSONValue?) {
            let screens = session + "/screens/"
            switch intent {
            case .navigate(let path): return ("POST", session + "/navigate", ["path": .string(path)])
            case .link(let name, let params): return ("POST", session + "/transitions", ["name": .string(name), "params": .object(params)])
            case .exit(let result): return ("POST", session + "/exit", result.map { ["result": $0] })
            case .back(let count, let result):
                return ("POST", session + "/back", .object(["count": .int(count)].merging(result.map { ["result": $0] } ?? [:]) { $1 }))
            case .setParams(let screen, let params): return ("PUT", screens + Driver.escaped(screen) + "/params", .object(params))
            case .patchState(let screen, let patch): return ("PATCH", screens + Driver.escaped(screen) + "/state", patch)
            case .command(let screen, let name, let args):
                return (
                    "POST", screens + Driver.escaped(screen) + "/commands",
                    .object(["name": .string(name)].merging(args.isEmpty ? [:] : ["args": .object(args)]) { $1 })
                )
            case .patchContext(let patch): return ("PATCH", session + "/context", patch)
            case .batch: return ("POST", session + "/intents", intent.wireJSON)
            }
        }

        /// An answer in a mismatch's words: `path P` or `refused: CODE: DETAIL`.
        static func outcome(of answer: DaemonClient.Answer) -> String {
            let view = answer.json ?? .null
            guard (200..<300).contains(answer.status) else {
                return "refused: \(view["code"]?.stringValue ?? "HTTP \(answer.status)"): \(view["detail"]?.stringValue ?? "")"
            }
            return "path \(view["path"]?.stringValue ?? "")"
        }

        /// The answer's view when it agrees with the expectation.
        /// - Throws: `ExitCode` 1 with the difference.
        private func observe(_ answer: DaemonClient.Answer, tour: Int, step: Int, intent: String, path: String, events: [String]) throws
            -> JSONValue
        {
            let view = answer.json ?? .null
            let observation: TourObservation
            if (200..<300).contains(answer.status) {
                observation = TourObservation(
                    path: view["path"]?.stringValue ?? "",
                    events: (view["events"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue }
                )
            } else {
                observation = TourObservation(
                    refusedWith: view["code"]?.stringValue ?? "HTTP \(answer.status)", detail: view["detail"]?.stringValue ?? ""
                )
            }
            if let mismatch = TourMismatch.compare(
                tour: tour, step: step, intent: intent, path: path, events: events, observed: observation)
            {
                throw ClientExit.fail(ClientExit.refused, mismatch.description)
            }
            return view
        }

        private func send(_ method: String, _ path: String, body: JSONValue?, token: String?) throws -> DaemonClient.Answer {
            var headers: [(String, String)] = []
            if let token { headers.append(("Authorization", "Bearer \(token)")) }
            var bytes: [UInt8]?
            if let body {
                var writer = JSONWriter()
                writer.write(body)
                bytes = writer.finish()
                headers.append(("Content-Type", "application/json"))
            }
            do {
                return try client.send(method, path, headers: headers, body: bytes)
            } catch {
                throw ClientExit.fail(ClientExit.unavailable, error.description)
            }
        }
    }
}
