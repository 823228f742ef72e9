import Foundation
import Logging
import NavHTTP
import NavJSON
import NavSessions
import Synchronization
import Testing

@testable import NavAPI
@testable import NavCLI

#if canImport(Glibc)
    import Glibc
#endif

/// navd without a process: the ``Transport/inProcess`` transport.
///
/// The same `navd serve` arguments as ``DaemonHarness`` passes the binary are parsed by the
/// daemon's own `ServeCommand` and `ServeSettings`, and `Daemon.application(for:logger:accessLog:)`
/// builds from them the `Application` (store, graphs, limits, tokens) the binary would serve,
/// logging as the binary logs (a `LineLogHandler`, here into a file). Each request is then what
/// the HTTP server hands that application: an `HTTPRequest` with the path as sent, the query
/// split off and decoded as the server decodes it (a target in absolute-form cut to its path or
/// refused), lowercased header fields and the body; and as the server does, a head with
/// ambiguous framing (`FramingFault`) goes to `malformed` or `unsupportedTransferCoding` and a
/// body over `--max-body` to `bodyTooLarge` instead of `handle`. The answer comes back as a
/// client would read it off the wire (``HTTPMessage``), with the `Content-Length` and
/// `Connection: close` libmicrohttpd adds (not its `Date`), and is validated against the spec
/// like any other.
///
/// What happens before the application sees a request — reading bytes off a socket, the request
/// line and header limits, NUL bytes in the head, chunked bodies, time-outs, keep-alive — is
/// not here, nor what `Daemon` runs beside the application (the session sweeper, the signals):
/// tests of those run on the binary.
final class InProcessHarness: NavdHarness, Sendable {
    /// A request this transport cannot carry.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    let options: HarnessOptions
    let settings: ServeSettings
    let application: Application
    let validator: OpenAPIValidator?
    var transport: Transport { .inProcess }
    let logFile: URL
    private let store: any SessionStore
    private let sink: LogSink
    private let logDescriptor: Int32
    private let stopped = Mutex(false)

    convenience init(graphs: [String] = ["Examples/news.json"], store: String = "memory", arguments: [String] = []) throws {
        try self.init(HarnessOptions(graphs: graphs, store: store, arguments: arguments))
    }

    /// Builds the application `navd serve` would serve for `options`.
    /// - Throws: when the arguments do not parse or check, the store does not open or a graph
    ///   does not load (where the binary would exit with an error).
    init(_ options: HarnessOptions) throws {
        // The arguments DaemonHarness gives the binary, but for the port: nothing listens here.
        let arguments =
            ["--listen", "127.0.0.1:0", "--store", options.store]
            + options.graphs.flatMap { ["--graph", DaemonHarness.packageRoot.appendingPathComponent($0).path] }
            + options.arguments
        let settings: ServeSettings
        do {
            // The spawned binary gets an environment without NAVD_ variables: none apply here either.
            settings = try ServeSettings(ServeCommand.parse(arguments), environment: [:])
        } catch {
            throw DaemonHarness.StartFailure(
                description: "navd serve \(arguments.joined(separator: " ")): \(ServeCommand.message(for: error))")
        }
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("navd-inprocess-\(UUID().uuidString.prefix(8)).log")
        let descriptor = open(logFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw DaemonHarness.StartFailure(description: "cannot create \(logFile.path)") }
        let sink = LogSink(descriptor: descriptor)
        let logger = Logger(label: "navd") { label in LineLogHandler(label: label, level: settings.logLevel, sink: sink) }
        let built: (application: Application, store: any SessionStore)
        do {
            built = try Daemon.application(for: settings, logger: logger, accessLog: Daemon.accessLog(for: logger))
        } catch {
            sink.flush()
            close(descriptor)
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: logFile)
            throw DaemonHarness.StartFailure(description: "navd serve \(arguments.joined(separator: " ")): \(error)\n\(log.suffix(2000))")
        }
        self.options = options
        self.settings = settings
        self.application = built.application
        self.store = built.store
        self.validator = try? OpenAPIValidator.shared.get()
        self.logFile = logFile
        self.sink = sink
        self.logDescriptor = descriptor
    }

    /// Stops what the test did not stop itself, as ``stop()`` does.
    deinit {
        stop()
        close(logDescriptor)
        try? FileManager.default.removeItem(at: logFile)
    }

    var log: String {
        sink.flush()
        return (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    /// What `navd serve` does on SIGTERM once its server has drained: not ready, the store closed.
    /// - Returns: 0, the status of a clean drain (a crash here would end the test process).
    @discardableResult
    func stop() -> Int32 {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first {
            application.ready.drain()
            store.close()
            sink.flush()
        }
        return 0
    }

    // MARK: HTTP

    /// Hands the request to the application as the HTTP server would.
    /// - Throws: ``Refusal`` once stopped (as a stopped binary refuses the connection), or for an
    ///   answer streamed by the server.
    func exchange(_ method: String, _ target: String, fields: [(name: String, value: String)], body: [UInt8]) throws -> HTTPMessage {
        guard !stopped.withLock({ $0 }) else { throw Refusal(description: "\(method) \(target): navd is stopped") }
        var headers = HTTPHeaders(reservingCapacity: fields.count + 2)
        headers.add("Host", "127.0.0.1")
        headers.add("Connection", "close")
        for (name, value) in fields { headers.add(name, Self.trimmed(value)) }
        let (path, query, repeatedQuery) = Self.split(target)
        var request = HTTPRequest(method: method, path: path, query: query, repeatedQuery: repeatedQuery, headers: headers, body: body)
        let response: HTTPResponse
        let badName = fields.contains { field in
            var name = field.name
            return !name.withUTF8 { FramingFault.isToken(UnsafeRawBufferPointer($0)) }
        }
        // The server reads the target before the header fields: an absolute-form target's
        // authority is refused first, its path routed.
        var fault: FramingFault?
        switch FramingFault.absoluteFormPath(path) {
        case .path(let routed)?: request.path = routed
        case .refused(let refusal)?: fault = refusal
        case nil: break
        }
        if let fault = fault ?? FramingFault.check(headers, http10: false, badName: badName) {
            // The server refuses ambiguous framing on the head alone, the body unread.
            request.body = []
            switch fault {
            case .malformed(let reason): response = application.malformed(request, reason: reason)
            case .unsupportedCoding(let coding): response = application.unsupportedTransferCoding(request, coding: coding)
            }
        } else if let declared = headers["content-length"].flatMap({ Int($0) }),
            case let limit = application.bodyLimit(for: request, configured: settings.maxBody), declared > limit
        {
            // The server answers a body announced over the route's limit without reading it.
            request.body = []
            response = application.bodyTooLarge(request, limit: limit)
        } else {
            response = application.handle(request)
        }
        return try Self.message(response, method: method)
    }

    // MARK: What the HTTP server does around the application

    /// The path as sent (its escapes kept), the query arguments after the first `?`, and the
    /// first of them given twice.
    static func split(_ target: String) -> (path: String, query: [String: String], repeatedQuery: String?) {
        guard let question = target.firstIndex(of: "?") else { return (target, [:], nil) }
        let (query, repeated) = queryArguments(target[target.index(after: question)...])
        return (String(target[..<question]), query, repeated)
    }

    /// Query arguments as libmicrohttpd splits them (`MHD_parse_arguments_`: at each `&`, then
    /// at the first `=`; a key without `=` has the empty string as its value; an empty string
    /// ends the list) and as the server decodes them: `+` is a space, then `%XX` escapes are
    /// decoded leniently. Of a repeated key, the last value is kept, and the first key repeated
    /// is named.
    static func queryArguments(_ text: Substring) -> (arguments: [String: String], repeated: String?) {
        var arguments: [String: String] = [:]
        var repeated: String?
        var rest = text[...]
        while !rest.isEmpty {
            let piece: Substring
            if let ampersand = rest.firstIndex(of: "&") {
                piece = rest[..<ampersand]
                rest = rest[rest.index(after: ampersand)...]
            } else {
                piece = rest
                rest = ""
            }
            let (key, value) =
                if let equals = piece.firstIndex(of: "=") {
                    (decoded(piece[..<equals]), decoded(piece[piece.index(after: equals)...]))
                } else {
                    (decoded(piece), "")
                }
            // As the HTTP server does: an argument without a name names no parameter.
            if key.isEmpty { continue }
            if arguments.updateValue(value, forKey: key) != nil, repeated == nil { repeated = key }
        }
        return (arguments, repeated)
    }

    private static func decoded(_ text: Substring) -> String {
        let bytes = text.utf8.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0 }
        return bytes.withUnsafeBufferPointer { PercentDecoding.decode($0, strict: false) } ?? ""
    }

    /// A header value as libmicrohttpd hands it over: the blanks after the colon skipped, any
    /// at its end kept.
    private static func trimmed(_ value: String) -> String {
        String(value.drop(while: { $0 == " " || $0 == "\t" }))
    }

    /// The response as a client reads it: names lowercased, repeated fields joined with ", ",
    /// `Content-Length` (but on 1xx, 204 and 304) and `Connection: close` added as libmicrohttpd
    /// adds them, no body on a HEAD answer.
    static func message(_ response: HTTPResponse, method: String) throws -> HTTPMessage {
        guard response.stream == nil else {
            throw Refusal(description: "\(method): a streamed answer is sent by the HTTP server only; test it on the process transport")
        }
        let status = (100...599).contains(response.status) ? response.status : 500
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            let name = name.lowercased()
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        if headers["connection"] == nil { headers["connection"] = "close" }
        let bodyless = (100..<200).contains(status) || status == 204 || status == 304
        if !bodyless { headers["content-length"] = String(response.body.count) }
        return HTTPMessage(status: status, headers: headers, body: bodyless || method == "HEAD" ? [] : response.body)
    }
}
