import ArgumentParser
import NavHTTPClient
import NavJSON
import NavWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
            New.self, Show.self, Go.self, Link.self, Back.self, Exit.self, State.self, Context.self, Watch.self, Events.self, End.self
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
                throw ClientExit.fail(
                    ClientExit.cannotWrite,
                    "\(error.message): session \(id) was created but is not remembered (`navd session new --json` shows its token)"
                )
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

        @Argument(
            help:
                "Its parameters, KEY=VALUE (a number or true/false is sent as such, a quoted JSON string as its text, anything else as a string)."
        )
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

        @Option(help: "A result for the screen revealed, any JSON.")
        var result: String?

        func validate() throws {
            if let count, count < 1 { throw ValidationError("COUNT must be at least 1") }
        }

        func run() throws {
            var body: [String: JSONValue] = [:]
            if let count { body["count"] = .int(count) }
            if let result { body["result"] = try Driver.json(result, "--result") }
            let driver = try Driver(options)
            try driver.mutate("POST", driver.sessionPath + "/back", json: .object(body))
        }
    }

    struct Exit: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Exit the top screen.")

        @OptionGroup var options: Options

        @Option(help: "A result for the screen revealed, any JSON.")
        var result: String?

        func run() throws {
            let body = try result.map { ["result": try Driver.json($0, "--result")] as JSONValue }
            let driver = try Driver(options)
            try driver.mutate("POST", driver.sessionPath + "/exit", json: body)
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
                {"event": "view"|"lifecycle"|"end", "id": SEQ?, "data": …}. A stream that breaks, \
                or drops this watcher for falling behind, is resumed after the last event printed \
                (Last-Event-ID), up to 3 times in a row. Exits 0 when the session ends (deleted, \
                expired; or the daemon shuts down), 69 when no daemon answers.
                """
        )

        @OptionGroup var options: Options

        @Option(help: "Replay the retained events after this seq first.")
        var after: Int?

        /// How many times in a row a broken stream is reconnected before giving up.
        static let reconnects = 3

        func run() throws {
            var driver = try Driver(options)
            driver.client.timeout = 0
            let json = options.json
            // The last lifecycle event printed: a reconnection resumes after it (Last-Event-ID),
            // so nothing still retained is missed and nothing comes twice.
            var lastSeq = after
            var failures = 0
            var connected = false
            while true {
                var parser = EventStreamParser()
                var ended: String?
                var headers = [("Accept", "text/event-stream"), ("Authorization", "Bearer \(driver.token)")]
                if let lastSeq { headers.append(("Last-Event-ID", String(lastSeq))) }
                let answer: DaemonClient.Answer?
                do {
                    answer = try driver.client.stream(driver.sessionPath + "/events", headers: headers) { bytes in
                        for message in parser.feed(bytes) {
                            failures = 0
                            connected = true
                            if message.event == "end" {
                                ended =
                                    (try? JSONValue(parsing: Array(message.data.utf8), maximumDepth: JSONValue.maximumViewDepth))?[
                                        "reason"]?.stringValue ?? "ended"
                                // A watcher that fell behind is dropped; it resumes where it was.
                                if ended == "lagging" { return false }
                            }
                            Watch.print(message, json: json)
                            if message.event == "lifecycle", let seq = message.id.flatMap(Int.init) { lastSeq = seq }
                            if ended != nil { return false }
                        }
                        return true
                    }
                } catch {
                    // The first connection says at once that no daemon answers; a later one retries.
                    if !connected || failures >= Self.reconnects {
                        throw ClientExit.fail(ClientExit.unavailable, error.description)
                    }
                    if failures == 0 { Self.resuming("broke", after: lastSeq) }
                    failures += 1
                    sleep(1)
                    continue
                }
                if let answer { _ = try driver.accept(answer) }
                if let ended, ended != "lagging" { return }
                if failures == 0 { Self.resuming(ended == nil ? "broke" : "fell behind", after: lastSeq) }
                if ended == nil {
                    failures += 1
                    guard failures <= Self.reconnects else {
                        throw ClientExit.fail(ClientExit.unavailable, "the event stream broke before the session ended")
                    }
                    sleep(1)
                }
            }
        }

        /// One line on standard error when the stream has to be opened again.
        static func resuming(_ what: String, after seq: Int?) {
            StandardStream.error.write(line: "navd: the event stream \(what); resuming after event \(seq.map(String.init) ?? "0")")
        }

        static func print(_ message: EventStreamParser.Message, json: Bool) {
            let data =
                (try? JSONValue(parsing: Array(message.data.utf8), maximumDepth: JSONValue.maximumViewDepth)) ?? .string(message.data)
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
