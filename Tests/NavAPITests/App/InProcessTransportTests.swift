import Foundation
import Testing

@testable import NavCLI
@testable import NavTestSupport

/// The in-process transport answers as the binary does: the same requests, sent to a spawned
/// `navd serve` and to the application `Daemon.application(for:logger:accessLog:)` builds from the
/// same arguments, get the same status, header fields and body — but for what differs by nature
/// between two daemons (session ids, tokens, generated request ids, `Date`). What tests moved
/// in process rely on is here: the query split and decoded as the server does, a target in
/// absolute-form, header values trimmed, bodies over `--max-body`, `Content-Length` where
/// libmicrohttpd adds it, HEAD.
@Suite struct InProcessTransportTests {
    static let adminToken = "admin-token-0123456789"

    /// A request, given the session it is about (and its token).
    typealias Request = (method: String, target: String, headers: [String: String], body: [UInt8])

    static func requests(_ session: NavdSession) -> [Request] {
        let auth = ["Authorization": "Bearer \(session.token)"]
        let json = auth.merging(["Content-Type": "application/json"]) { $1 }
        let admin = ["Authorization": "Bearer \(adminToken)"]
        let navigate = Array(#"{"path":"list_news"}"#.utf8)
        return [
            ("GET", "/healthz", [:], []),
            ("GET", "/readyz", [:], []),
            ("HEAD", "/healthz", [:], []),
            ("GET", "/openapi.yaml", [:], []),
            ("GET", "/nope", [:], []),
            ("DELETE", "/healthz", [:], []),
            ("BREW", "/healthz", [:], []),
            ("get", "/healthz", [:], []),
            ("GET", "/healthz", ["X-Request-Id": "client-chosen-1"], []),
            ("GET", "/healthz", ["X-Request-Id": " client-chosen-2\t "], []),
            ("GET", session.url, auth, []),
            ("GET", session.url, ["Authorization": "Bearer  "], []),
            ("GET", session.url, ["Authorization": "  Bearer \(session.token)\t"], []),
            ("GET", session.url, ["Authorization": "Basic \(session.token)"], []),
            ("GET", session.url, [:], []),
            ("GET", "/v1/sessions", admin, []),
            ("POST", session.url + "/navigate", json, navigate),
            ("POST", session.url + "/navigate", json.merging(["If-Match": "\"1\""]) { $1 }, navigate),
            (
                "POST", session.url + "/navigate", json.merging(["Idempotency-Key": "k-1"]) { $1 },
                Array(#"{"path":"show_news(id=1)"}"#.utf8)
            ),
            (
                "POST", session.url + "/navigate", json.merging(["Idempotency-Key": "k-1"]) { $1 },
                Array(#"{ "path" : "show_news(id=1)" }"#.utf8)
            ),
            ("POST", session.url + "/navigate", auth.merging(["Content-Type": "text/plain"]) { $1 }, navigate),
            ("POST", session.url + "/navigate", json, Array(#"{"path":"#.utf8)),
            ("POST", session.url + "/navigate", json, [UInt8](repeating: UInt8(ascii: " "), count: 70_000)),
            ("POST", session.url + "/back", json, Array(#"{"count":1}"#.utf8)),
            (
                "PATCH", session.url + "/screens/e1/state", auth.merging(["Content-Type": "application/merge-patch+json"]) { $1 },
                Array(#"{"a":{"b":1}}"#.utf8)
            ),
            ("GET", session.url + "/events", auth, []),
            ("GET", session.url + "/events?after=2&limit=2", auth, []),
            ("GET", session.url + "/events?after=+1%00", auth, []),
            ("GET", session.url + "/events?after=+1", auth, []),
            ("GET", session.url + "/events?after=%2B1", auth, []),
            ("GET", session.url + "/events?after=1&after=3", auth, []),
            ("GET", session.url + "/events?%61fter=3", auth, []),
            ("GET", session.url + "/events?after", auth, []),
            ("GET", session.url + "/events?limit=", auth, []),
            ("GET", session.url + "/events?after=%ff", auth, []),
            ("GET", session.url + "/events?&&after=4&", auth, []),
            ("GET", session.url + "/events?after=1e2", auth, []),
            ("GET", "/v1/sessions/%ff%fe", auth, []),
            ("GET", "/v1/sessions/\(session.id)%00", auth, []),
            ("PUT", session.url + "/screens/%C3%28/params", json, Array("{}".utf8)),
            ("GET", "/v1/graphs/%00", [:], []),
            ("GET", "/v1/graphs/news%20", [:], []),
            ("GET", "//", [:], []),
            ("GET", "/v1/graphs", [:], []),
            ("GET", "/v1/graphs/news?version=1", [:], []),
            ("GET", "/v1/graphs/news/diagram?format=svg", [:], []),
            ("GET", "/v1/graphs/news/diagram?format=png", [:], []),
            ("GET", "http://127.0.0.1/healthz", [:], []),
            ("GET", "HTTPS://navd.example:8443/v1/graphs/news?version=1", [:], []),
            ("GET", "http://[::1]", [:], []),
            ("GET", "http://user@navd.example/healthz", [:], []),
            (
                "PUT", "/v1/graphs/news", admin.merging(["Content-Type": "application/yaml"]) { $1 },
                Array("name: news\nstart: /top\nscenes: {top: {}}\n".utf8)
            ),
            ("PUT", "/v1/graphs/news", ["Content-Type": "application/json"], Array("{}".utf8)),
            ("POST", "/v1/sessions", ["Content-Type": "application/json"], Array(#"{"context":"u1"}"#.utf8)),
            ("DELETE", session.url, auth, []),
            ("DELETE", session.url, auth, [])
        ]
    }

    /// `answer` with what differs by nature between two daemons replaced: the session's id and
    /// tokens by placeholders, a request id that is not (part of) the one sent by `{generated}`;
    /// `Date` left out.
    static func normalised(_ answer: HTTPMessage, session: NavdSession, sentRequestID: String?) -> HTTPMessage {
        let secrets = [
            (session.id, "{id}"), (session.token, "{token}"), (session.created["watchToken"]?.string ?? "{watchToken}", "{watchToken}")
        ]
        func replaced(_ text: String) -> String {
            secrets.reduce(text) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
        }
        var headers: [String: String] = [:]
        for (name, value) in answer.headers where name != "date" {
            headers[name] = name != "x-request-id" ? replaced(value) : sentRequestID?.contains(value) == true ? value : "{generated}"
        }
        let body = String(validating: answer.body, as: UTF8.self).map { Array(replaced($0).utf8) } ?? answer.body
        // A replaced id or token is as long as the placeholder, not the original.
        if headers["content-length"] != nil, body.count != answer.body.count {
            headers["content-length"] = "\(answer.body.count) (replaced: \(body.count))"
        }
        return HTTPMessage(status: answer.status, headers: headers, body: body)
    }

    @Test func theSameRequestsGetTheSameAnswersAsFromTheBinary() throws {
        let arguments = ["--admin-token", Self.adminToken]
        let binary = try DaemonHarness(arguments: arguments)
        let inProcess = try InProcessHarness(arguments: arguments)
        let sessions = try [binary as any NavdHarness, inProcess].map { try $0.createSession(context: ["user": "u1"]) }
        // The creation answers too, but for the secrets.
        #expect(
            Self.normalised(
                HTTPMessage(status: 201, headers: [:], body: sessions[0].created.bytes), session: sessions[0], sentRequestID: nil
            ).text
                == Self.normalised(
                    HTTPMessage(status: 201, headers: [:], body: sessions[1].created.bytes), session: sessions[1], sentRequestID: nil
                ).text
        )
        let exchanges = zip(Self.requests(sessions[0]), Self.requests(sessions[1]))
        for (index, (toBinary, toInProcess)) in exchanges.enumerated() {
            let what = "#\(index) \(toInProcess.method) \(toInProcess.target)"
            // Validated as every answer is, the few the spec does not cover apart (the spec's
            // paths are in origin-form).
            let validate = !["BREW", "get", "HEAD"].contains(toBinary.method) && toBinary.target.hasPrefix("/")
            let sentRequestID = toBinary.headers["X-Request-Id"]
            let fromBinary = Self.normalised(
                try binary.request(toBinary.method, toBinary.target, headers: toBinary.headers, body: toBinary.body, validate: validate),
                session: sessions[0], sentRequestID: sentRequestID
            )
            let fromInProcess = Self.normalised(
                try inProcess.request(
                    toInProcess.method, toInProcess.target, headers: toInProcess.headers, body: toInProcess.body, validate: validate),
                session: sessions[1], sentRequestID: sentRequestID
            )
            #expect(fromInProcess.status == fromBinary.status, "\(what): \(fromInProcess) | binary: \(fromBinary)")
            #expect(fromInProcess.headers == fromBinary.headers, "\(what)")
            #expect(fromInProcess.text == fromBinary.text, "\(what)")
        }
        #expect(try binary.stop() == 0)
        #expect(inProcess.stop() == 0)
    }

    /// The options parse and check as `navd serve`'s do: a bad one fails the start, as it ends
    /// the binary, and the settings are the ones the binary would run with; it logs as the
    /// binary does, and stopped, it answers nothing more.
    @Test func theArgumentsAreTheBinarysArguments() throws {
        #expect(throws: DaemonHarness.StartFailure.self) { _ = try InProcessHarness(arguments: ["--backend-token", "short"]) }
        #expect(throws: DaemonHarness.StartFailure.self) { _ = try InProcessHarness(arguments: ["--no-such-option"]) }
        #expect(throws: DaemonHarness.StartFailure.self) { _ = try InProcessHarness(graphs: ["Examples/no-such-graph.json"]) }
        let navd = try InProcessHarness(arguments: [
            "--max-body", "1024", "--max-sessions", "7", "--session-ttl", "90s", "--max-context", "100"
        ])
        #expect(navd.settings.maxBody == 1024)
        #expect(navd.settings.maxSessions == 7)
        #expect(navd.settings.sessionTTLMilliseconds == 90_000)
        #expect(navd.settings.maxContext == 100)
        #expect(navd.settings.store == "memory")
        #expect(try navd.request("GET", "/v1/graphs/news").status == 200)
        // It logs as the binary does, request lines included.
        #expect(navd.log.contains("graph loaded"))
        #expect(navd.log.contains("msg=request method=GET"))
        #expect(navd.stop() == 0)
        // Stopped, it answers nothing more, as a stopped binary refuses the connection.
        #expect(throws: InProcessHarness.Refusal.self) { try navd.request("GET", "/healthz") }
    }
}
