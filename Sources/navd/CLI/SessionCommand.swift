import ArgumentParser
import Foundation
import NavJSON

/// `navd session …`: the CLI driver. Drives one session of a running daemon, remembered in
/// `./.navd/session` (``SessionFile``), and prints the stage as a tree, or the daemon's JSON.
struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Drive a session of a running daemon (the current one is remembered in ./.navd/session).",
        discussion: """
            `navd session new` creates a session and remembers its id and token in ./.navd/session; \
            the other commands act on it (or on NAVD_SESSION with NAVD_TOKEN, or --session with \
            --token). The daemon is --url, else NAVD_URL, else the remembered session's, else \
            http://127.0.0.1:8080. Exit status: 0 applied (a no-op too), 1 refused (the problem's \
            code on standard error, one line), 64 usage error or no session, 69 no daemon answered, \
            73 the session file cannot be written. `navd session end` deletes the session.
            """,
        subcommands: [
            New.self, Show.self, Go.self, Link.self, Back.self, Exit.self, State.self, Context.self, Watch.self, Events.self, End.self,
        ]
    )

    /// The options every `navd session` command takes.
    struct Options: ParsableArguments {
        @Option(help: "The daemon's URL (default: NAVD_URL, then the remembered session's, then http://127.0.0.1:8080).")
        var url: String?

        @Option(help: "The session id (default: NAVD_SESSION, then ./.navd/session).")
        var session: String?

        @Option(help: "The session's token (default: NAVD_TOKEN, then ./.navd/session).")
        var token: String?

        @Flag(help: "Print the daemon's JSON as it answered, instead of the tree.")
        var json = false

        @Option(help: "Seconds to wait for the daemon.")
        var timeout: Int = 30
    }

    // MARK: New

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a session and remember it in ./.navd/session.")

        @OptionGroup var options: Options

        @Option(help: "The graph to run (default: the daemon's default graph).")
        var graph: String?

        @Option(help: "The start path (default: the graph's).")
        var start: String?

        @Option(help: "The session context, a JSON object, e.g. '{\"user\": \"u1\"}'.")
        var context: String?

        @Option(help: "The token creating a session needs when the daemon runs with --backend-token (default: NAVD_BACKEND_TOKEN).")
        var backendToken: String?

        func run() throws {
            let driver = try Driver(options, needsSession: false)
            var body: [String: JSONValue] = [:]
            if let graph { body["graph"] = .string(graph) }
            if let start { body["start"] = .string(start) }
            if let context { body["context"] = .object(try Driver.object(context, "--context")) }
            var headers: [(String, String)] = []
            if let auth = backendToken ?? ProcessInfo.processInfo.environment["NAVD_BACKEND_TOKEN"], !auth.isEmpty {
                headers.append(("Authorization", "Bearer \(auth)"))
            }
            let answer = try driver.send("POST", "/v1/sessions", json: .object(body), headers: headers)
            let view = try driver.accept(answer)
            guard let id = view["id"]?.stringValue, let token = view["token"]?.stringValue else {
                throw ClientExit.fail(ClientExit.unavailable, "the daemon's answer has no session id and token")
            }
            let remembered = SessionFile(
                url: driver.client.base, id: id, token: token, watchToken: view["watchToken"]?.stringValue,
                graph: view["graph"]?["name"]?.stringValue
            )
            do {
                try remembered.write()
            } catch {
                throw ClientExit.fail(ClientExit.cannotWrite, error.message)
            }
            driver.print(answer, view: view, mutation: true, footer: "remembered in \(SessionFile.path)")
        }
    }

    // MARK: Reads

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the session's stage.")

        @OptionGroup var options: Options

        func run() throws {
            let driver = try Driver(options)
            let answer = try driver.send("GET", driver.sessionPath)
            driver.print(answer, view: try driver.accept(answer), mutation: false)
        }
    }

    struct Events: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the session's retained events.")

        @OptionGroup var options: Options

        @Option(help: "Only the events after this seq.")
        var after: Int = 0

        @Option(help: "At most this many events.")
        var limit: Int?

        func validate() throws {
            guard after >= 0 else { throw ValidationError("--after must be 0 or more") }
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() throws {
            let driver = try Driver(options)
            let answer = try driver.send("GET", driver.sessionPath + "/events?after=\(after)" + (limit.map { "&limit=\($0)" } ?? ""))
            let page = try driver.accept(answer)
            if options.json {
                Driver.emit(String(decoding: answer.body, as: UTF8.self))
                return
            }
            let events = page["events"]?.arrayValue ?? []
            Driver.emit(events.isEmpty ? "no events after \(after)" : ViewText.events(events))
            if let next = page["next"]?.intValue { Driver.emit("next \(next)") }
        }
    }

    // MARK: Intents

    struct Go: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Navigate to a path: relative (list_news), absolute (^/top#home), .., up(n=2).")

        @OptionGroup var options: Options

        @Argument(help: "The path.")
        var path: String

        func run() throws {
            let driver = try Driver(options)
            try driver.mutate("POST", driver.sessionPath + "/navigate", json: ["path": .string(path)])
        }
    }

    struct Link: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Apply a named link, with its parameters as KEY=VALUE.")

        @OptionGroup var options: Options

        @Argument(help: "The link's name.")
        var name: String

        @Argument(help: "Its parameters, KEY=VALUE (a number or true/false is sent as such, anything else as a string).")
        var params: [String] = []

        func run() throws {
            var values: [String: JSONValue] = [:]
            for param in params {
                guard let equals = param.firstIndex(of: "="), equals != param.startIndex else {
                    throw ClientExit.fail(ClientExit.usage, "a link parameter is KEY=VALUE, not '\(param)'")
                }
                let text = String(param[param.index(after: equals)...])
                values[String(param[..<equals])] = Driver.scalar(text)
            }
            let driver = try Driver(options)
            try driver.mutate("POST", driver.sessionPath + "/transitions", json: ["name": .string(name), "params": .object(values)])
        }
    }

    struct Back: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Go back COUNT screens (1 by default).")

        @OptionGroup var options: Options

        @Argument(help: "How many screens.")
        var count: Int?

        func validate() throws {
            if let count, count < 1 { throw ValidationError("COUNT must be at least 1") }
        }

        func run() throws {
            let driver = try Driver(options)
            try driver.mutate("POST", driver.sessionPath + "/back", json: count.map { ["count": .int($0)] } ?? .object([:]))
        }
    }

    struct Exit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Exit the top screen.")

        @OptionGroup var options: Options

        func run() throws {
            let driver = try Driver(options)
            try driver.mutate("POST", driver.sessionPath + "/exit", json: nil)
        }
    }

    struct State: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Merge-patch a screen's state (RFC 7396; the top screen by default).")

        @OptionGroup var options: Options

        @Argument(help: "The merge patch, a JSON object: '{\"editing\": true}'.")
        var patch: String

        @Option(help: "The screen's id (default: the top screen).")
        var screen: String?

        func run() throws {
            let object = try Driver.object(patch, "PATCH")
            let driver = try Driver(options)
            var target = screen
            if target == nil {
                let answer = try driver.send("GET", driver.sessionPath)
                target = try driver.accept(answer)["screens"]?.arrayValue?.last?["id"]?.stringValue
            }
            guard let target else { throw ClientExit.fail(ClientExit.refused, "the session has no screen") }
            try driver.mutate(
                "PATCH", driver.sessionPath + "/screens/\(Driver.escaped(target))/state", json: .object(object),
                contentType: "application/merge-patch+json"
            )
        }
    }

    struct Context: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge-patch the session context (RFC 7396): PATCH /v1/sessions/{id}/context.")

        @OptionGroup var options: Options

        @Argument(help: "The merge patch, a JSON object: '{\"user\": \"u1\", \"locale\": null}'.")
        var patch: String

        func run() throws {
            let object = try Driver.object(patch, "PATCH")
            let driver = try Driver(options)
            try driver.mutate("PATCH", driver.sessionPath + "/context", json: .object(object), contentType: "application/merge-patch+json")
        }
    }

    struct End: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End the session (DELETE it) and forget it if it is the remembered one.")

        @OptionGroup var options: Options

        func run() throws {
            let driver = try Driver(options)
            _ = try driver.accept(try driver.send("DELETE", driver.sessionPath))
            var forgotten = ""
            if let file = try? SessionFile.read(), file.id == driver.id {
                try? FileManager.default.removeItem(atPath: SessionFile.path)
                forgotten = "; \(SessionFile.path) removed"
            }
            if !options.json { Driver.emit("session \(driver.id) ended" + forgotten) }
        }
    }

    // MARK: Watch

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Follow the session live: the current view, then every change, until it ends (or Ctrl-C).",
            discussion: """
                Reads the session's event stream (GET …/events, Accept: text/event-stream). Prints \
                each change's events, then the view after it; with --json, one line per message: \
                {"event": "view"|"lifecycle"|"end", "id": SEQ?, "data": …}. Exits 0 when the \
                session ends (deleted, expired; or the daemon shuts down), 69 if the stream breaks.
                """
        )

        @OptionGroup var options: Options

        @Option(help: "Replay the retained events after this seq first.")
        var after: Int?

        func run() throws {
            var driver = try Driver(options)
            driver.client.timeout = 0
            var parser = EventStreamParser()
            var ended: String?
            let json = options.json
            let answer: DaemonClient.Answer?
            do {
                answer = try driver.client.stream(
                    driver.sessionPath + "/events" + (after.map { "?after=\($0)" } ?? ""),
                    headers: [("Accept", "text/event-stream"), ("Authorization", "Bearer \(driver.token)")]
                ) { bytes in
                    for message in parser.feed(bytes) {
                        Watch.print(message, json: json)
                        if message.event == "end" {
                            ended = (try? JSONValue(parsing: message.data))?["reason"]?.stringValue ?? "ended"
                            return false
                        }
                    }
                    return true
                }
            } catch {
                throw ClientExit.fail(ClientExit.unavailable, error.description)
            }
            if let answer { _ = try driver.accept(answer) }
            guard ended != nil else {
                throw ClientExit.fail(ClientExit.unavailable, "the event stream broke before the session ended")
            }
        }

        static func print(_ message: EventStreamParser.Message, json: Bool) {
            let data = (try? JSONValue(parsing: message.data)) ?? .string(message.data)
            if json {
                var line: [String: JSONValue] = ["event": .string(message.event), "data": data]
                if let id = message.id { line["id"] = .string(id) }
                Driver.emit(ViewText.compact(.object(line)))
                return
            }
            switch message.event {
            case "view": Driver.emit(ViewText.view(data) + "\n")
            case "lifecycle": Driver.emit(ViewText.event(data))
            case "end": Driver.emit("end: \(data["reason"]?.stringValue ?? message.data)")
            default: Driver.emit("\(message.event): \(message.data)")
            }
        }
    }
}

/// What every `navd session` command shares: which daemon and session, sending, and printing.
struct Driver {
    var client: DaemonClient
    let id: String
    let token: String
    let json: Bool

    /// Resolves the daemon and the session from the options, the environment and ./.navd/session.
    /// - Throws: `ExitCode` 64 (a bad URL, no session) after printing why.
    init(_ options: SessionCommand.Options, needsSession: Bool = true) throws {
        let environment = ProcessInfo.processInfo.environment
        func given(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        let file: SessionFile
        do {
            file = try SessionFile.read()
        } catch {
            throw ClientExit.fail(ClientExit.usage, error.message)
        }
        let url = given(options.url) ?? given(environment["NAVD_URL"]) ?? given(file.url) ?? SessionFile.defaultURL
        do {
            client = try DaemonClient(url: url, timeout: max(0, options.timeout))
        } catch {
            throw ClientExit.fail(ClientExit.usage, error.description)
        }
        json = options.json
        let chosen = given(options.session) ?? given(environment["NAVD_SESSION"]) ?? given(file.id)
        let chosenToken = given(options.token) ?? given(environment["NAVD_TOKEN"]) ?? (chosen == file.id ? given(file.token) : nil)
        if needsSession {
            guard let chosen else {
                throw ClientExit.fail(ClientExit.usage, "no session: run `navd session new`, or set NAVD_SESSION and NAVD_TOKEN")
            }
            guard let chosenToken else {
                throw ClientExit.fail(ClientExit.usage, "no token for session \(chosen): set NAVD_TOKEN or pass --token")
            }
            id = chosen
            token = chosenToken
        } else {
            id = ""
            token = ""
        }
    }

    var sessionPath: String { "/v1/sessions/\(Driver.escaped(id))" }

    /// Sends a request with the session's token and a JSON body.
    func send(_ method: String, _ path: String, json body: JSONValue? = nil, contentType: String = "application/json",
              headers: [(String, String)]? = nil) throws -> DaemonClient.Answer {
        var fields = headers ?? [("Authorization", "Bearer \(token)")]
        var bytes: [UInt8]?
        if let body {
            var writer = JSONWriter()
            writer.write(body)
            bytes = writer.finish()
            fields.append(("Content-Type", contentType))
        }
        do {
            return try client.send(method, path, headers: fields, body: bytes)
        } catch {
            throw ClientExit.fail(ClientExit.unavailable, error.description)
        }
    }

    /// The answer's JSON when it is a success.
    /// - Throws: `ExitCode` 1 with the problem's code and detail on standard error (the problem on
    ///   standard output too, with --json); 69 when a success is not JSON.
    func accept(_ answer: DaemonClient.Answer) throws -> JSONValue {
        guard (200..<300).contains(answer.status) else {
            if json, !answer.body.isEmpty { Driver.emit(String(decoding: answer.body, as: UTF8.self)) }
            guard let problem = answer.json, let code = problem["code"]?.stringValue else {
                throw ClientExit.fail(ClientExit.refused, "HTTP \(answer.status) (no problem document)")
            }
            var line = "\(code): \(problem["detail"]?.stringValue ?? "")"
            if let offset = problem["offset"]?.intValue { line += " (at offset \(offset))" }
            if let param = problem["param"]?.stringValue { line += " (param \(param))" }
            if code == "unauthorized" { line += " — no such session here, or the wrong token" }
            throw ClientExit.fail(ClientExit.refused, line)
        }
        if answer.status == 204 { return .object([:]) }
        guard let value = answer.json else {
            throw ClientExit.fail(ClientExit.unavailable, "the daemon answered \(answer.status) without JSON")
        }
        return value
    }

    /// Sends an intent and prints the view and its events.
    func mutate(_ method: String, _ path: String, json body: JSONValue?, contentType: String = "application/json") throws {
        let answer = try send(method, path, json: body, contentType: contentType)
        print(answer, view: try accept(answer), mutation: true)
    }

    /// The daemon's bytes with --json; otherwise the tree, then the events of a mutation.
    func print(_ answer: DaemonClient.Answer, view: JSONValue, mutation: Bool, footer: String? = nil) {
        if json {
            Driver.emit(String(decoding: answer.body, as: UTF8.self))
            return
        }
        var text = ViewText.view(view)
        if mutation {
            let events = view["events"]?.arrayValue ?? []
            text += events.isEmpty ? "\nno change" : "\nevents:\n" + ViewText.events(events)
        }
        if let footer { text += "\n" + footer }
        Driver.emit(text)
    }

    /// Writes a line to standard output at once (a watcher's output may go to a pipe).
    static func emit(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// A JSON object given on the command line.
    static func object(_ text: String, _ name: String) throws -> [String: JSONValue] {
        guard let value = try? JSONValue(parsing: text), let object = value.objectValue else {
            throw ClientExit.fail(ClientExit.usage, "\(name) must be a JSON object, not '\(text)'")
        }
        return object
    }

    /// A link parameter's value: a JSON number or boolean as such, anything else as a string.
    static func scalar(_ text: String) -> JSONValue {
        if let value = try? JSONValue(parsing: text) {
            switch value {
            case .int, .double, .bool: return value
            default: break
            }
        }
        return .string(text)
    }

    /// A path segment percent-encoded (ids are hex; a screen id typed by hand may not be).
    static func escaped(_ segment: String) -> String {
        var result = ""
        for byte in segment.utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~") {
                result.append(Character(UnicodeScalar(byte)))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
