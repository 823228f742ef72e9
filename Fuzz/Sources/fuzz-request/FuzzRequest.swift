import FuzzSupport
import Logging
import NavJSON

@testable import NavAPI
@testable import NavCore
@testable import NavHTTP
@testable import NavSessions

/// Whole requests through the in-process application (`Application`, exactly what the HTTP
/// server calls): the input creates a session, then sends up to 12 requests built from it —
/// method, a route of the daemon's own table with the session's id and screen ids (or other
/// text) filled in, query, headers (the session's token, the watch token, the admin token, a
/// wrong one or none; media types; If-Match; Idempotency-Key) and a body. Every answer must be
/// a real status, never 500; every error a problem+json document whose `code` is one of the
/// stable codes with its own status; every JSON answer parseable JSON.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { bytes in
        var input = FuzzInput(bytes)
        // One input in eight may upload graphs, on a registry of its own; the others share the
        // example graphs, decoded once (decoding them for every input cost most of its time).
        var client = Client(uploads: input.below(8) == 0)
        client.create(from: &input)
        var count = 0
        while !input.isAtEnd, count < 12 {
            count += 1
            client.send(from: &input)
        }
    }
    return 0
}

private let adminToken = "fuzz-admin-token-0123456789"
private let maxBody = 65536
private let silent = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
private let documents: [JSONValue] = ["news.json", "kabukit.json"].map { name in
    do {
        return try JSONValue(parsing: ExampleGraphs.bytes(name))
    } catch {
        fatalError("Examples/\(name): \(error)")
    }
}

/// The example graphs, for inputs that change no graph.
private let sharedGraphs = exampleGraphs()

private func exampleGraphs() -> GraphRegistry {
    let graphs = GraphRegistry()
    for document in documents {
        do {
            try graphs.add(document)
        } catch {
            fatalError("example graph refused: \(error)")
        }
    }
    return graphs
}

/// One input's daemon (a fresh one each time, so that an input replays the same way) and what
/// the client has learnt from its answers.
private struct Client {
    let application: Application
    var id = "0123456789abcdef0123456789abcdef"
    var token = "not-a-token"
    var watchToken = "not-a-watch-token"
    var screens: [String] = ["e1"]
    var version = 1
    /// Whether this input's requests may change graphs (its registry is its own).
    let uploads: Bool

    init(uploads: Bool) {
        self.uploads = uploads
        application = Application(
            graphs: uploads ? exampleGraphs() : sharedGraphs, configuration: .init(adminToken: adminToken, sessions: .init(maxSessions: 8)),
            store: MemoryStore(shardCount: 1), logger: silent, now: { 1_700_000_000_000 }
        )
    }

    mutating func create(from input: inout FuzzInput) {
        let bodies: [String] = [
            "", "{}", #"{"context":{"user":"u1","locale":"ja"}}"#, #"{"graph":"kabukit"}"#, #"{"graph":"nosuch"}"#
        ]
        var body = Array(input.pick(bodies).utf8)
        if input.below(4) == 0 { body = Array(input.text().utf8) }
        var headers: HTTPHeaders = ["content-type": "application/json"]
        if input.below(8) == 0 { headers.add("idempotency-key", "k1") }
        send(HTTPRequest(method: "POST", path: "/v1/sessions", headers: headers, body: body))
    }

    mutating func send(from input: inout FuzzInput) {
        let routes = application.routeTemplates
        var method: String
        let template: String
        switch input.below(16) {
        case 0: (method, template) = (input.pick(["GET", "HEAD", "OPTIONS", "TRACE", "get", ""]), input.pick(routes).template)
        case 1: (method, template) = (input.pick(["POST", "PUT", "PATCH", "DELETE"]), input.text(maximum: 64))
        default: (method, template) = input.pick(routes)
        }
        if !uploads, template.hasPrefix("/v1/graphs"), method != "HEAD" { method = "GET" }
        var path = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            path += rest[..<open]
            path += fill(String(rest[rest.index(after: open)..<close]), from: &input)
            rest = rest[rest.index(after: close)...]
        }
        path += rest
        if input.below(8) == 0 { path += input.text(maximum: 16) }

        var query: [String: String] = [:]
        for _ in 0..<input.below(3) {
            let key = input.pick(["after", "limit", "version", "format", "access_token", "wait", "x"])
            query[key] = input.bool() ? String(Int(Int8(bitPattern: input.byte()))) : input.text(maximum: 16)
        }
        // A long poll would make the input wait for real time: the fuzzer asks without waiting.
        if query["wait"] != nil { query["wait"] = "0" }

        var headers = HTTPHeaders()
        switch input.below(8) {
        case 0: break
        case 1: headers.add("authorization", "Bearer " + watchToken)
        case 2: headers.add("authorization", "Bearer " + adminToken)
        case 3: headers.add("authorization", input.text(maximum: 48))
        default: headers.add("authorization", "Bearer " + token)
        }
        switch input.below(8) {
        case 0: break
        case 1:
            headers.add(
                "content-type",
                input.pick(["application/yaml", "text/plain", "application/merge-patch+json", "application/json; charset=utf-8"]))
        case 2: headers.add("content-type", input.text(maximum: 32))
        default: headers.add("content-type", "application/json")
        }
        if input.below(4) == 0 { headers.add("if-match", input.bool() ? "\"\(version)\"" : input.text(maximum: 12)) }
        if input.below(6) == 0 { headers.add("idempotency-key", input.pick(["k1", "k2", ""])) }
        if input.below(8) == 0 { headers.add(input.text(maximum: 12), input.text(maximum: 24)) }
        if input.below(8) == 0 { headers.add("accept", input.pick(["text/event-stream", "application/json", "*/*"])) }

        let body = self.body(for: template, from: &input)
        let request = HTTPRequest(method: method, path: clean(path), query: query, headers: headers, body: body)
        send(request)
    }

    func fill(_ name: String, from input: inout FuzzInput) -> String {
        switch (name, input.below(8)) {
        case (_, 0): return input.text(maximum: 40)
        case ("id", _): return id
        case ("screen", 1): return "e999"
        case ("screen", _): return input.pick(screens)
        case ("name", _): return input.pick(["news", "kabukit", "nosuch"])
        default: return "x"
        }
    }

    func body(for template: String, from input: inout FuzzInput) -> [UInt8] {
        if input.below(4) == 0 {
            return Array(input.take(Int(input.byte()) * 4))
        }
        let path = pathText(from: &input)
        let text: String
        switch template {
        case let route where route.hasSuffix("/navigate"): text = #"{"path":\#(JSONValue.string(path).jsonString)}"#
        case let route where route.hasSuffix("/transitions"):
            text = #"{"name":"\#(input.pick(["show", "open", "home", "login", "next", "nosuch"]))","params":\#(params(from: &input))}"#
        case let route where route.hasSuffix("/back"): text = input.bool() ? "" : #"{"count":\#(Int(Int8(bitPattern: input.byte())))}"#
        case let route where route.hasSuffix("/params"): text = params(from: &input)
        case let route where route.hasSuffix("/state"):
            text = input.pick([#"{"editing":true}"#, #"{"draft":null}"#, #"{"a":{"b":[1,2.5,"c"]}}"#, "[1]", "null"])
        case "/v1/sessions": text = #"{"start":\#(JSONValue.string(path).jsonString)}"#
        case "/v1/graphs/{name}": text = input.pick(documents).jsonString
        default: text = input.pick(["", "{}", "[]", "null"])
        }
        return Array(text.utf8)
    }

    static let pathPieces = [
        "top", "home", "news", "list_news", "show_news", "profile", "login", "onboarding", "nosuch",
        "/", "!", "!/", "#", "^", "..", "up", "(", ")", "=", ",", "%2C", "id=1", "category=3", "(id=x)"
    ]

    func pathText(from input: inout FuzzInput) -> String {
        var text = ""
        for _ in 0..<input.below(10) { text += input.pick(Self.pathPieces) }
        return text
    }

    func params(from input: inout FuzzInput) -> String {
        var members: [String: JSONValue] = [:]
        for _ in 0..<input.below(3) {
            let key = input.pick(["id", "category", "q", "n"])
            members[key] = input.bool() ? .int(Int(Int8(bitPattern: input.byte()))) : .string(input.text(maximum: 8))
        }
        return JSONValue.object(members).jsonString
    }

    /// What libmicrohttpd would hand over: a C string, so no NUL.
    func clean(_ text: String) -> String {
        text.contains("\0") ? String(text.unicodeScalars.filter { $0 != "\0" }.map(Character.init)) : text
    }

    mutating func send(_ request: HTTPRequest) {
        let description =
            "\(request.method) \(request.path) \(request.query) \(Array(request.headers).map { "\($0.name): \($0.value)" }) \(String(decoding: request.body, as: UTF8.self).debugDescription)"
        let response =
            request.body.count > maxBody
            ? application.bodyTooLarge(request, limit: maxBody)
            : application.handle(request)
        check(response, for: description)
        learn(from: response)
    }

    func check(_ response: HTTPResponse, for request: String) {
        require((200...599).contains(response.status), "\(request) answered status \(response.status)")
        require(response.status != 500, "\(request) answered 500: \(String(decoding: response.body, as: UTF8.self))")
        let contentType = response.headers.first { $0.0.lowercased() == "content-type" }?.1
        if response.status >= 400 {
            require(
                contentType == "application/problem+json", "\(request) answered \(response.status) as \(contentType ?? "no content type")")
            guard let problem = try? JSONValue(parsing: response.body), let code = problem["code"]?.stringValue else {
                violated(
                    "\(request) answered \(response.status) without a problem document: \(String(decoding: response.body, as: UTF8.self))")
            }
            guard let known = APIError.Code(rawValue: code) else { violated("\(request) answered the unknown code \(code)") }
            require(known.status == response.status, "\(request) answered \(code) with status \(response.status)")
            require(problem["status"]?.intValue == response.status, "\(request): the problem's status is not \(response.status)")
        } else if contentType?.hasPrefix("application/json") == true {
            require((try? JSONValue(parsing: response.body)) != nil, "\(request) answered \(response.status) with invalid JSON")
        }
    }

    /// The session's id and tokens from a create, its screens and version from any view.
    mutating func learn(from response: HTTPResponse) {
        guard response.status < 300, let view = try? JSONValue(parsing: response.body) else { return }
        if response.status == 201, let id = view["id"]?.stringValue, let token = view["token"]?.stringValue {
            self.id = id
            self.token = token
            if let watch = view["watchToken"]?.stringValue { watchToken = watch }
        }
        if let version = view["version"]?.intValue { self.version = version }
        if let screens = view["screens"]?.arrayValue {
            let ids = screens.compactMap { $0["id"]?.stringValue }
            if !ids.isEmpty { self.screens = ids }
        }
    }
}
