import ArgumentParser
import NavHTTPClient
import NavJSON

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What every `navd session` command shares: which daemon and session, sending, and printing.
struct Driver {
    var client: DaemonClient
    let id: String
    let token: String
    let json: Bool

    /// Resolves the daemon and the session from the options, the environment and ./.navd/session.
    /// - Throws: `ExitCode` 64 (a bad URL, no session) after printing why.
    init(_ options: SessionCommand.Options, needsSession: Bool = true) throws {
        try self.init(
            url: options.url, session: options.session, token: options.token, json: options.json, timeout: options.timeout,
            needsSession: needsSession)
    }

    /// As for a `navd session` command's options; `lastToken` is the token taken when neither
    /// `token`, NAVD_TOKEN nor the remembered session gives one (`navd record`: NAVD_ADMIN_TOKEN).
    init(
        url optionURL: String?, session: String?, token: String?, json: Bool = false, timeout: Int, needsSession: Bool = true,
        lastToken: String? = nil
    ) throws {
        let environment = ProcessInfo.processInfo.environment
        func given(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        // The remembered session fills in only what the options and the environment leave out:
        // a broken file is in the way only of a command that needs something from it.
        let given3 = [
            optionURL ?? environment["NAVD_URL"], session ?? environment["NAVD_SESSION"], token ?? environment["NAVD_TOKEN"] ?? lastToken
        ]
        let file: SessionFile
        do {
            file = try SessionFile.read()
        } catch {
            guard given3.allSatisfy({ given($0) != nil }) else { throw ClientExit.fail(ClientExit.usage, error.message) }
            file = SessionFile()
        }
        let url = given(optionURL) ?? given(environment["NAVD_URL"]) ?? given(file.url) ?? SessionFile.defaultURL
        do {
            client = try DaemonClient(url: url, timeout: max(0, timeout))
        } catch {
            throw ClientExit.fail(ClientExit.usage, error.description)
        }
        self.json = json
        let chosen = given(session) ?? given(environment["NAVD_SESSION"]) ?? given(file.id)
        let chosenToken =
            given(token) ?? given(environment["NAVD_TOKEN"]) ?? (chosen == file.id ? given(file.token) : nil) ?? given(lastToken)
        if needsSession {
            guard let chosen else {
                throw ClientExit.fail(ClientExit.usage, "no session: run `navd session new`, or set NAVD_SESSION and NAVD_TOKEN")
            }
            guard let chosenToken else {
                throw ClientExit.fail(ClientExit.usage, "no token for session \(chosen): set NAVD_TOKEN or pass --token")
            }
            id = chosen
            self.token = chosenToken
        } else {
            id = ""
            self.token = ""
        }
    }

    var sessionPath: String { "/v1/sessions/\(Driver.escaped(id))" }

    /// Sends a request with the session's token and a JSON body.
    func send(
        _ method: String, _ path: String, json body: JSONValue? = nil, contentType: String = "application/json",
        headers: [(String, String)]? = nil
    ) throws -> DaemonClient.Answer {
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
        StandardStream.output.write(line: text)
    }

    /// Any JSON value given on the command line.
    static func json(_ text: String, _ name: String) throws -> JSONValue {
        guard let value = try? JSONValue(parsing: text) else {
            throw ClientExit.fail(ClientExit.usage, "\(name) must be JSON, not '\(text)'")
        }
        return value
    }

    /// A JSON object given on the command line.
    static func object(_ text: String, _ name: String) throws -> [String: JSONValue] {
        guard let value = try? JSONValue(parsing: text), let object = value.objectValue else {
            throw ClientExit.fail(ClientExit.usage, "\(name) must be a JSON object, not '\(text)'")
        }
        return object
    }

    /// A link parameter's value: a JSON number or boolean as such, a JSON string (`'"12"'`, to
    /// send digits as a string) as its text, anything else as the string it is.
    static func scalar(_ text: String) -> JSONValue {
        if let value = try? JSONValue(parsing: text) {
            switch value {
            case .int, .double, .bool: return value
            case .string(let inner): return .string(inner)
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
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~")
            {
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
