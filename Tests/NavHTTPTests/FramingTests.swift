import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Strict HTTP/1.1 framing against the binary over raw sockets (docs/design.md, "HTTP framing"):
/// each ambiguous head is answered with a problem and `Connection: close`, the connection is
/// closed, and a request sent behind it is never read; well-formed framing still works.
@Suite(.serialized, .sharedDaemon(transport: .process))
struct FramingTests {
    /// The shared daemon's port and a session a smuggled request would change.
    private func setUp() throws -> (port: Int, victim: NavdSession, path: JSON?) {
        let navd = try DaemonHarness.shared()
        let daemon = try #require(navd as? DaemonHarness)
        let victim = try navd.createSession()
        #expect(try navd.navigate(victim, "login").status == 200)
        return (daemon.port, victim, try navd.view(victim)["path"])
    }

    @Test(arguments: FramingAttack.all)
    func anAmbiguousHeadIsRefusedAndItsConnectionClosed(_ attack: FramingAttack) throws {
        let (port, victim, path) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        try connection.send(attack.bytes(smuggling: FramingAttack.smuggled(into: victim)))

        let answer = try connection.readResponse()
        #expect(answer.status == attack.status, "\(answer)")
        #expect(answer.code == attack.code, "\(answer)")
        #expect(answer.headers["content-type"] == "application/problem+json")
        #expect(answer.headers["connection"]?.lowercased() == "close")
        // Nothing after the answer: the connection ends, the smuggled request unanswered...
        let after = try connection.readToEnd()
        #expect(after.isEmpty, "a second answer: \(String(decoding: after, as: UTF8.self))")
        // ...and unread: the session it would change is as it was.
        #expect(try DaemonHarness.shared().view(victim)["path"] == path)
    }

    /// libmicrohttpd 0.9.75 refuses a `Content-Length` it cannot parse before navd sees the
    /// request, with its own HTML 400 (whose header block it writes twice), and closes the
    /// connection: no problem document, but nothing after the head is read as a request.
    @Test(arguments: FramingAttack.unreadableLengths)
    func anUnreadableContentLengthIsRefusedByLibmicrohttpd(_ attack: FramingAttack) throws {
        let (port, victim, path) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        try connection.send(attack.bytes(smuggling: FramingAttack.smuggled(into: victim)))

        let answer = try connection.readResponse()
        #expect(answer.status == 400, "\(answer)")
        #expect(answer.headers["connection"]?.lowercased() == "close")
        let rest = String(decoding: try connection.readToEnd(), as: UTF8.self)
        #expect(!rest.contains("problem+json") && !rest.contains("HTTP/1.1 200"), "the smuggled request was answered: \(rest)")
        #expect(try DaemonHarness.shared().view(victim)["path"] == path)
    }

    @Test func keepAliveStillServesRequestsInTurn() throws {
        let (port, _, _) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        for _ in 0..<3 {
            try connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            let answer = try connection.readResponse()
            #expect(answer.status == 200)
            #expect(answer.headers["connection"]?.lowercased() != "close")
        }
        // Pipelined too.
        try connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
        #expect(try connection.readResponse().status == 200)
    }

    @Test func aChunkedUploadStillWorks() throws {
        let (port, _, _) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        let request =
            "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n"
            + "1\r\n{\r\n1\r\n}\r\n0\r\n\r\n"
        try connection.send(Array(request.utf8))
        let created = try connection.readResponse()
        #expect(created.status == 201, "\(created)")
        // The connection stays open for the next request.
        try connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
    }

    /// A control byte the client percent-encoded is data, not framing: the target is read as
    /// usual (here, an unknown route) and the connection stays open.
    @Test func aPercentEncodedCRInTheTargetIsData() throws {
        let (port, _, _) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        try connection.send(Array("GET /nowhere%0D%0AX HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let answer = try connection.readResponse()
        #expect(answer.status == 404, "\(answer)")
        #expect(answer.headers["connection"]?.lowercased() != "close")
        try connection.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
    }

    /// A target in absolute-form routes by its path, as RFC 9112 asks of every server: a
    /// health check, a navigation, the scheme in any case, no path at all; the connection stays
    /// open.
    @Test func anAbsoluteFormTargetRoutesByItsPath() throws {
        let (port, victim, _) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        try connection.send(Array("GET http://127.0.0.1:\(port)/healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
        // A container's name as the host: `_` is unreserved in a host name (RFC 3986 §3.2.2).
        try connection.send(Array("GET http://navd_1:8080/healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
        try connection.send(Array("GET HTTPS://[::1]:8080/v1/graphs/news?version=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let graph = try connection.readResponse()
        #expect(graph.status == 200, "\(graph)")
        #expect(graph.headers["connection"]?.lowercased() != "close")
        let body = #"{"path":"help"}"#
        try connection.send(
            Array(
                ("POST http://navd.example\(victim.url)/navigate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(victim.token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8))
        let navigated = try connection.readResponse()
        #expect(navigated.status == 200, "\(navigated)")
        #expect(try DaemonHarness.shared().view(victim)["path"]?.string?.hasSuffix("help") == true)
        try connection.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let root = try connection.readResponse()
        try connection.send(Array("GET http://x HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let noPath = try connection.readResponse()
        #expect(noPath.status == root.status && noPath.headers["location"] == root.headers["location"], "\(noPath)")
    }

    /// A folded header is refused as a NUL byte in a header is (both move what libmicrohttpd
    /// parsed, and the check cannot tell which), so the answer names both; a NUL byte in the
    /// method or the target is named alone, since folding never reaches them.
    @Test(arguments: [
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b", Self.inAHeader),
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb", Self.inAHeader),
        ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\0b", Self.inAHeader),
        ("GET /healthz\0/x HTTP/1.1\r\nHost: x", "the method or the request target holds a NUL byte"),
        ("G\0ET /healthz HTTP/1.1\r\nHost: x", "the method or the request target holds a NUL byte")
    ])
    func aFoldedHeaderOrANULIsNamedInTheAnswer(head: String, detail: String) throws {
        let (port, _, _) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        try connection.send(Array((head + "\r\n\r\n").utf8))
        let answer = try connection.readResponse()
        #expect(answer.status == 400)
        #expect(answer.code == "malformed_request")
        #expect(try answer.json()["detail"]?.string == detail, "\(answer)")
    }

    private static let inAHeader = "a header holds a NUL byte or is folded over several lines"

    @Test func anHTTP10RequestNeedsNoHost() throws {
        let (port, _, _) = try setUp()
        let connection = try HTTPConnection(port: port, timeout: 5)
        try connection.send(Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
        #expect(try connection.readResponse().status == 200)
        let body = "{}"
        let post = try HTTPConnection(port: port, timeout: 5)
        try post.send(Array("POST /v1/sessions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n\(body)".utf8))
        #expect(try post.readResponse().status == 201)
    }
}
