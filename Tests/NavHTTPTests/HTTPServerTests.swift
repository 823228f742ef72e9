import Foundation
import Logging
import Testing

@testable import NavCore
@testable import NavHTTP
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Live tests of `HTTPServer` over loopback with a raw-socket HTTP/1.1 client,
/// so that keep-alive, chunked uploads and early answers are visible exactly
/// as a client sees them.
@Suite(.serialized)
struct HTTPServerTests {
    @Test func keepAliveAnswersTwoRequestsOnOneConnection() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send("GET /first HTTP/1.1\r\nHost: test\r\n\r\n")
        let first = try client.readResponse()
        try client.send("GET /second HTTP/1.1\r\nHost: test\r\n\r\n")
        let second = try client.readResponse()

        #expect(first.status == 200)
        #expect(first.header("x-path") == "/first")
        #expect(first.header("connection")?.lowercased() != "close")
        #expect(second.status == 200)
        #expect(second.header("x-path") == "/second")
        #expect(second.header("connection")?.lowercased() != "close")
        #expect(server.boundPort != 0)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send("GET /a HTTP/1.1\r\nHost: test\r\n\r\nGET /b HTTP/1.1\r\nHost: test\r\n\r\n")

        #expect(try client.readResponse().header("x-path") == "/a")
        #expect(try client.readResponse().header("x-path") == "/b")
    }

    @Test func postBodyOf40KBIsAccumulated() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)
        let body = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

        try client.send(Array("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        let echoed = try client.readResponse()
        try client.send("GET /after HTTP/1.1\r\nHost: test\r\n\r\n")
        let after = try client.readResponse()

        #expect(echoed.status == 200)
        #expect(echoed.body == body)
        #expect(echoed.header("x-method") == "POST")
        #expect(after.status == 200)
    }

    @Test func chunkedBodyUnderTheLimitIsAccumulated() throws {
        let server = try startServer(maxBody: 1024)
        let client = try RawClient(port: server.boundPort)

        try client.send(
            "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n"
        )
        let response = try client.readResponse()

        #expect(response.status == 200)
        #expect(response.text == "hello world")
    }

    @Test func bodyOverTheLimitByContentLengthIs413() throws {
        let server = try startServer(maxBody: 1024)
        let client = try RawClient(port: server.boundPort)
        let body = [UInt8](repeating: 0x61, count: 4096)

        try client.send(Array("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 4096\r\n\r\n".utf8) + body)
        let response = try client.readResponse()

        #expect(response.status == 413)
        #expect(response.text == "too large: 1024")
        #expect(response.header("connection")?.lowercased() == "close")
    }

    @Test func hugeContentLengthIsAnsweredWithoutReadingTheBody() throws {
        let server = try startServer(maxBody: 1024)
        let client = try RawClient(port: server.boundPort)

        // Announces 1 GB and sends only a little of it: the answer must not wait
        // for the rest.
        try client.send(
            Array("POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000000\r\n\r\n".utf8)
                + [UInt8](repeating: 0x61, count: 2000)
        )
        let response = try client.readResponse()

        #expect(response.status == 413)
    }

    @Test func chunkedBodyOverTheLimitIs413() throws {
        let server = try startServer(maxBody: 1024)
        let client = try RawClient(port: server.boundPort)
        let chunk = "200\r\n" + String(repeating: "b", count: 512) + "\r\n"

        try client.send(
            "POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(repeating: chunk, count: 4) + "0\r\n\r\n"
        )
        let response = try client.readResponse()
        try client.send("GET /after HTTP/1.1\r\nHost: test\r\n\r\n")
        let after = try client.readResponse()

        // MHD takes no response before a body ends, so this one was read to
        // its end (and thrown away): the connection stays usable.
        #expect(response.status == 413)
        #expect(response.text == "too large: 1024")
        #expect(after.status == 200)
    }

    @Test func chunkedBodyFarOverTheLimitDropsTheConnection() throws {
        let server = try startServer(maxBody: 1024)
        let client = try RawClient(port: server.boundPort)
        let chunk = "10000\r\n" + String(repeating: "c", count: 65536) + "\r\n"

        try client.send("POST /echo HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        // 2 MiB without an end: more than the server reads to be able to answer.
        for _ in 0..<32 {
            guard (try? client.send(chunk)) != nil else { break }
        }

        #expect(throws: RawClient.Failure.self) { _ = try client.readResponse() }
    }

    @Test func queryIsDecodedAndPathKeepsItsEncoding() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send(
            "GET /a%2Fb/c%20d?name=a%20b&plus=x+y&empty=&flag&enc=%2B%26%3D&utf=%C3%A9&bad=%zz HTTP/1.1\r\nHost: test\r\n\r\n"
        )
        let response = try client.readResponse()

        #expect(response.header("x-path") == "/a%2Fb/c%20d")
        #expect(response.lines["query.name"] == "a b")
        #expect(response.lines["query.plus"] == "x y")
        #expect(response.lines["query.empty"] == "")
        #expect(response.lines["query.flag"] == "")
        #expect(response.lines["query.enc"] == "+&=")
        #expect(response.lines["query.utf"] == "é")
        #expect(response.lines["query.bad"] == "%zz")
        #expect(response.lines["repeated"] == nil)
    }

    /// A query argument given twice is named to the application, which refuses the request:
    /// a proxy or a log may have read the other value. The first one repeated is named.
    @Test func aRepeatedQueryArgumentIsNamed() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send("GET /a?x=1&b=2&b=3&x=4&flag&flag HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try client.readResponse()

        #expect(response.lines["repeated"] == "b")
        #expect(response.lines["query.b"] == "3")
    }

    /// Arguments without a name (`?&&a=1`, `?=x&=y`) name no parameter: let be, as an unknown
    /// argument is, not a parameter '' given twice.
    @Test func argumentsWithoutANameAreLetBe() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send("GET /a?&&a=1&=x&=y& HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try client.readResponse()

        #expect(response.lines["repeated"] == nil)
        #expect(response.lines["query.a"] == "1")
        #expect(response.lines["query."] == nil)
    }

    @Test func headerNamesAreLowercasedAndRepeatsJoined() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send("GET /h HTTP/1.1\r\nHost: test\r\nX-Custom-Header: Some Value\r\nX-Dup: a\r\nx-dup: b\r\n\r\n")
        let response = try client.readResponse()

        #expect(response.lines["header.x-custom-header"] == "Some Value")
        #expect(response.lines["header.x-dup"] == "a, b")
        #expect(response.lines["header.host"] == "test")
        #expect(response.lines.keys.allSatisfy { $0 == $0.lowercased() })
    }

    @Test func responseHeadersAndStatusAreSent() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send("GET /status/404 HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try client.readResponse()

        #expect(response.status == 404)
        #expect(response.header("content-type") == "text/plain; charset=utf-8")
        #expect(response.header("x-multi") == "1")
    }

    @Test func stopIsIdempotentAndClosesTheListener() throws {
        let server = try startServer()
        let port = server.boundPort
        let client = try RawClient(port: port)
        try client.send("GET /x HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try client.readResponse().status == 200)

        server.stop()
        server.stop()

        #expect(server.boundPort == port)
        #expect(throws: RawClient.Failure.self) { _ = try RawClient(port: port) }
    }

    @Test func theSamePortCanBeBoundAgainAfterStop() throws {
        let first = try startServer()
        let port = first.boundPort
        first.stop()

        let second = HTTPServer(
            configuration: .init(port: port, threads: 1),
            handler: EchoHandler(),
            logger: Self.logger
        )
        try second.start()
        let client = try RawClient(port: port)
        try client.send("GET /again HTTP/1.1\r\nHost: test\r\n\r\n")

        #expect(try client.readResponse().header("x-path") == "/again")
        #expect(second.boundPort == port)
    }

    @Test func stopLetsARequestInProgressFinish() throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)
        try client.send("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.1)  // the handler is now sleeping

        let stopped = Thread { server.stop() }
        stopped.start()
        let response = try client.readResponse()

        #expect(response.status == 200)
        #expect(response.header("x-path") == "/slow")
        #expect(response.header("connection")?.lowercased() == "close")
    }

    @Test func serverDeinitStopsTheDaemon() throws {
        var server: HTTPServer? = try startServer()
        let port = try #require(server?.boundPort)
        server = nil

        #expect(throws: RawClient.Failure.self) { _ = try RawClient(port: port) }
    }

    @Test func startFailsWhenThePortIsTaken() throws {
        let first = try startServer()
        let second = HTTPServer(
            configuration: .init(port: first.boundPort, threads: 1),
            handler: EchoHandler(),
            logger: Self.logger
        )

        #expect {
            try second.start()
        } throws: { error in
            guard case .startFailed(let function, _, let reason) = error as? HTTPServerError else { return false }
            return function == "MHD_start_daemon" && reason.contains("in use")
        }
    }

    @Test func startTwiceIsRefused() throws {
        let server = try startServer()
        #expect(throws: HTTPServerError.alreadyRunning) { try server.start() }
    }

    /// A host that is neither an IPv4 or IPv6 address nor a host name (letters, digits, `-`, `.`)
    /// is refused before anything is opened. (Names that do not resolve are refused too; not
    /// tested here, since that would ask DNS.)
    @Test(arguments: ["bad host", "a_b!", "[::1]", "1.2.3.4:80", "::1::2"])
    func hostsThatAreNeitherAddressesNorNamesAreRefused(host: String) {
        let server = HTTPServer(
            configuration: .init(host: host, port: 0, threads: 1),
            handler: EchoHandler(),
            logger: Self.logger
        )
        #expect(throws: HTTPServerError.invalidHost(host)) { try server.start() }
    }

    /// IPv6: `::1` is served over IPv6 loopback.
    @Test func anIPv6AddressIsServed() throws {
        let server = try startServer(host: "::1")
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = server.boundPort.bigEndian
        _ = inet_pton(AF_INET6, "::1", &address.sin6_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        #expect(connected == 0)
        let request = Array("GET /v6 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } == request.count)
        var buffer = [UInt8](repeating: 0, count: 64)
        let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        #expect(received > 12)
        #expect(String(decoding: buffer.prefix(max(0, received)), as: UTF8.self).hasPrefix("HTTP/1.1 200"))
    }

    @Test func localhostMeansLoopback() throws {
        let server = try startServer(host: "localhost")
        let client = try RawClient(port: server.boundPort)
        try client.send("GET /l HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }

    /// A NUL byte anywhere in the request line or a header is refused with a 400 and never
    /// reaches the handler: libmicrohttpd hands the method, URL and header values over as C
    /// strings, so the request would otherwise be acted on cut short at the NUL
    /// (`DELETE /s/1\0/screens/e1/state` arrived as `DELETE /s/1`).
    @Test(arguments: [
        "DELETE /s/1\0/screens/e1/state HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a\0 HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a%00\0b HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a?x=1\0&y=2 HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a?x=1&\0 HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a?\0 HTTP/1.1\r\nHost: test\r\n\r\n",
        "GE\0T /a HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET\0 /a HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET  \0/a HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer a\0b\r\n\r\n",
        "GET /a HTTP/1.1\r\nX-A: a\0\r\nHost: test\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\nX-A: a\0\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\nX-A:\0 b\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\n\0X-A: b\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\nX-\0A: b\r\n\r\n",
        "GET /a HTTP/1.1\nHost: test\nX-A: a\0b\n\n"
    ])
    func aNULInTheRequestHeadIsRefusedWith400(request: String) throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send(request)
        let response = try client.readResponse()

        #expect(response.status == 400)
        #expect(response.header("x-method") == nil, "the handler answered: \(response.text)")
        // The server goes on serving.
        let next = try RawClient(port: server.boundPort)
        try next.send("GET /after HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try next.readResponse().header("x-path") == "/after")
    }

    /// What the NUL check must let through: spaces MHD tolerates, empty values and query
    /// pieces, headers with blanks before or after their value.
    @Test(arguments: [
        "GET /a HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET    /a HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a HTTP/1.0\r\n\r\n",
        "GET /a? HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a?x=&&y&z=1& HTTP/1.1\r\nHost: test\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\nX-Empty:\r\nX-Blank: \t  \r\nX-Tab:\tv\r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test\r\nCookie: a=1; b=2\r\nX-Trailing: v  \r\n\r\n",
        "GET /a HTTP/1.1\r\nHost: test \t\r\n\r\n",
        "GET /a HTTP/1.0\r\nHost: test\r\nX-Long: \(String(repeating: "v", count: 4000))\r\n\r\n"
    ])
    func wellFormedHeadsPassTheNULCheck(request: String) throws {
        let server = try startServer()
        let client = try RawClient(port: server.boundPort)

        try client.send(request)
        let response = try client.readResponse()

        #expect(response.status == 200, "\(response.text)")
        #expect(response.header("x-path") == "/a")
    }

    /// A head refused for its framing is answered on the first call with `Connection: close`
    /// added by the server, though the handler's answer does not say it: without it MHD keeps a
    /// connection whose request announced no body, and reads what follows as a request.
    @Test(arguments: [
        ("GET /a HTTP/1.1\r\n\r\n", 400),
        ("GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET /a HTTP/1.1\r\nHost: test\r\nX-A : b\r\n\r\n", 400),
        ("GET /a HTTP/1.1\nHost: test\n\n", 400),
        ("GET /a HTTP/1.1\r\nHost: test\n\r\n", 400),
        ("GET /a HTTP/1.1\r\nHost: test\r\n\n", 400),
        ("GET /a HTTP/1.1\r\nHost: test\r\nX-A: a\rb\r\n\r\n", 400),
        ("POST /a HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: gzip\r\n\r\n", 501)
    ])
    func aRefusedHeadClosesItsConnection(request: String, status: Int) throws {
        let server = try startServer()
        let client = try HTTPConnection(port: Int(server.boundPort), timeout: 5)

        try client.send(Array((request + "GET /smuggled HTTP/1.1\r\nHost: test\r\n\r\n").utf8))
        let response = try client.readResponse()

        #expect(response.status == status)
        #expect(response.headers["connection"] == "close")
        #expect(response.headers["x-method"] == nil, "the handler answered: \(response)")
        #expect(try client.readToEnd().isEmpty, "the smuggled request was answered")
    }

    /// What ``FramingFault/check(_:http10:badName:)`` makes of a head's fields.
    @Test func framingFaultsAreFoundOnTheFieldsAlone() {
        func check(_ fields: [(String, String)], http10: Bool = false, badName: Bool = false) -> FramingFault? {
            var headers = HTTPHeaders(reservingCapacity: 4)
            for (name, value) in fields { headers.add(name, value) }
            return FramingFault.check(headers, http10: http10, badName: badName)
        }
        let host = ("Host", "x")
        #expect(check([host]) == nil)
        #expect(check([]) != nil)
        #expect(check([], http10: true) == nil)
        #expect(check([host], badName: true) != nil)
        #expect(check([host, ("Content-Length", "2")]) == nil)
        #expect(check([host, ("Transfer-Encoding", "chunked")]) == nil)
        #expect(check([host, ("Transfer-Encoding", "CHUNKED")]) == nil)
        #expect(check([host, ("Transfer-Encoding", "chunked")], http10: true) != nil)
        #expect(check([host, ("Transfer-Encoding", "chunked"), ("Content-Length", "2")]) != nil)
        #expect(check([host, ("Content-Length", "2"), ("Content-Length", "2")]) != nil)
        #expect(check([host, host]) != nil)
        #expect(
            check([host, ("Transfer-Encoding", "chunked ")]) == .malformed(reason: "Transfer-Encoding must be exactly \"chunked\", once"))
        #expect(check([host, ("Transfer-Encoding", "")]) == .malformed(reason: "Transfer-Encoding must be exactly \"chunked\", once"))
        #expect(check([host, ("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")]) != nil)
        #expect(check([host, ("Transfer-Encoding", "gzip")]) == .unsupportedCoding("gzip"))
        #expect(check([host, ("Transfer-Encoding", "chunked, br")]) == .unsupportedCoding("br"))
        #expect(check([host, ("Transfer-Encoding", " identity ,chunked")]) == .unsupportedCoding("identity"))
        // Host names a host and an optional port, or nothing (RFC 9110 §7.2), and no more.
        // Blanks around a value are not part of it (RFC 9110 §5.5); MHD skips only those before.
        for value in ["localhost", "127.0.0.1:8080", "[::1]:8080", "navd_1", "Navd.Example:", "x ", "[::1]:80\t", "x.:65535"] {
            #expect(check([("Host", value)]) == nil, "\(value)")
        }
        for value in [
            "", " ", "user@x", "x:8o", ":80", "x]:80", "[::1", "x y", "x,y", "x/y", "x%41", "x:65536", "x:000080", "a..b", ".", "[:]"
        ] {
            #expect(
                check([("Host", value)]) == .malformed(reason: "the Host header field must be a host and an optional port"), "\(value)")
        }
        let authorization = ("Authorization", "Bearer a")
        #expect(check([host, authorization]) == nil)
        #expect(check([host, authorization, authorization]) == .malformed(reason: "the Authorization header field is sent more than once"))
        #expect(FramingFault.isToken(UnsafeRawBufferPointer(start: nil, count: 0)) == false)
        for (name, token) in [("Content-Length", true), ("X-A_b.c~!", true), ("Content-Length ", false), ("A:B", false), ("Ä", false)] {
            var name = name
            #expect(name.withUTF8 { FramingFault.isToken(UnsafeRawBufferPointer($0)) } == token, "\(name)")
        }
    }

    /// What ``FramingFault/absoluteFormPath(_:)`` routes, as MHD hands the target over (the query
    /// split off): nil for a target not in absolute-form, the path after a `host[:port]`
    /// authority, and a refusal for any other authority.
    @Test(
        arguments: [
            ("/healthz", nil), ("*", nil), ("http:/healthz", nil), ("httpx://x/healthz", nil), ("/http://x/healthz", nil),
            ("http://x", "/"), ("HTTP://x/healthz", "/healthz"), ("hTtPs://x/v1/graphs", "/v1/graphs"),
            ("http://127.0.0.1:8080/healthz", "/healthz"), ("http://[::1]:8080/v1/graphs", "/v1/graphs"),
            ("http://[::ffff:127.0.0.1]/healthz", "/healthz"), ("http://navd_1.example:8080/healthz", "/healthz"),
            ("http://x:/healthz", "/healthz"), ("http://x//healthz", "//healthz"), ("http://x.example.:65535/a", "/a"),
            ("http://[2001:db8::1]:0/a", "/a")
        ] as [(String, String?)])
    func anAbsoluteFormTargetRoutesByThePathAfterItsAuthority(target: String, path: String?) {
        #expect(FramingFault.absoluteFormPath(target) == path.map { .path($0) })
    }

    /// An authority that is not `host[:port]` as RFC 3986 §3.2.2 writes one (less percent-encoding
    /// and the sub-delimiters, which no host name needs) is refused, whatever a proxy may have
    /// made of it: no host at all (RFC 9110 §4.2.1), a port that is not a number, brackets
    /// around anything but an IPv6 address, user information.
    @Test(arguments: [
        "http:///healthz", "http://:80/healthz", "http://:/healthz", "https://[]/healthz", "http://x:8o/healthz",
        "http://x:80:80/healthz", "http://::1/healthz", "http://[::1/healthz", "http://::1]/healthz", "http://a]b[/healthz",
        "http://[x]/healthz", "http://[::1]x/healthz", "http://[::1]:8080]/healthz", "http://user@x/healthz",
        "http://x%2F/healthz", "http://x;y/healthz", "http://x y/healthz", "http://x\\y/healthz", "http://x#y/healthz",
        "http://[:]/healthz", "http://[1::2::3]/healthz", "http://[1.2.3.4:]/healthz", "http://[::1.2]/healthz", "http://x:99999/healthz",
        "http://x:123456/healthz", "http://a..b/healthz", "http://./healthz", "http://.x/healthz", "http://x../healthz"
    ])
    func anAbsoluteFormTargetWithAnotherAuthorityIsRefused(target: String) {
        #expect(
            FramingFault.absoluteFormPath(target)
                == .refused(.malformed(reason: "an absolute-form request target must name a host and an optional port, nothing else")))
    }

    /// Quiet unless something goes wrong; `.trace` shows what MHD reports.
    private static let logger: Logger = {
        var logger = Logger(label: "navd.test.http")
        logger.logLevel = .warning
        return logger
    }()

    private func startServer(host: String = "127.0.0.1", maxBody: Int = 65536) throws -> HTTPServer {
        let server = HTTPServer(
            configuration: .init(host: host, port: 0, threads: 2, maxBody: maxBody, connectionTimeout: 5),
            handler: EchoHandler(),
            logger: Self.logger
        )
        try server.start()
        return server
    }
}

/// Echoes what it was sent: `/echo` returns the body, `/status/N` answers N,
/// `/slow` sleeps first, anything else lists the query and headers as lines.
private struct EchoHandler: HTTPHandler {
    func handle(_ request: consuming HTTPRequest) -> HTTPResponse {
        var headers = [("X-Method", request.method), ("X-Path", request.path)]
        if request.path == "/echo" {
            return HTTPResponse(status: 200, headers: headers, body: request.body)
        }
        if request.path.hasPrefix("/status/"), let status = Int(request.path.dropFirst("/status/".count)) {
            headers += [("Content-Type", "text/plain; charset=utf-8"), ("X-Multi", "1")]
            return HTTPResponse(status: status, headers: headers)
        }
        if request.path == "/slow" {
            Thread.sleep(forTimeInterval: 0.4)
        }
        let lines =
            request.query.map { "query.\($0.key): \($0.value)" }
            + (request.repeatedQuery.map { ["repeated: \($0)"] } ?? [])
            + request.headers.map { "header.\($0.name): \($0.value)" }
        return HTTPResponse(status: 200, headers: headers, body: Array(lines.sorted().joined(separator: "\n").utf8))
    }

    func bodyTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, body: Array("too large: \(limit)".utf8))
    }

    func malformed(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        HTTPResponse(status: 400, headers: [("X-Path", request.path)], body: Array("malformed: \(reason)".utf8))
    }

    func unsupportedTransferCoding(_ request: HTTPRequest, coding: String) -> HTTPResponse {
        HTTPResponse(status: 501, headers: [("X-Path", request.path)], body: Array("unsupported: \(coding)".utf8))
    }
}

/// A blocking HTTP/1.1 client on one TCP connection to 127.0.0.1.
private final class RawClient {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        var text: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name }?.1
        }

        /// The body's `key: value` lines, as `EchoHandler` writes them.
        var lines: [String: String] {
            var result: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let value = line[line.index(after: colon)...].dropFirst()
                result[String(line[..<colon])] = String(value)
            }
            return result
        }
    }

    private let socket: Int32
    private var buffered: [UInt8] = []

    init(port: UInt16) throws {
        switch Loopback.connect(port: Int(port), timeout: 5) {
        case .success(let fd): socket = fd
        case .failure(let error): throw Failure(description: "connect to port \(port): errno \(error.code)")
        }
    }

    deinit {
        close(socket)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads one response: status line, headers, and a body of
    /// `Content-Length` bytes (or up to the end of the stream without one).
    func readResponse() throws -> Response {
        let separator = Array("\r\n\r\n".utf8)
        var headerEnd = buffered.firstRange(of: separator)
        while headerEnd == nil {
            guard try fill() else { throw Failure(description: "connection closed before a response") }
            headerEnd = buffered.firstRange(of: separator)
        }
        guard let headerEnd else { throw Failure(description: "no header end") }
        let head = String(decoding: buffered[..<headerEnd.lowerBound], as: UTF8.self)
        buffered.removeSubrange(..<headerEnd.upperBound)

        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(head)")
        }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let response = Response(status: status, headers: headers, body: [])
        if let length = response.header("content-length").flatMap({ Int($0) }) {
            while buffered.count < length {
                guard try fill() else { throw Failure(description: "connection closed inside a body") }
            }
            let body = Array(buffered[..<length])
            buffered.removeSubrange(..<length)
            return Response(status: status, headers: headers, body: body)
        }
        while try fill() {}
        defer { buffered = [] }
        return Response(status: status, headers: headers, body: buffered)
    }

    /// Reads more bytes into the buffer; false at the end of the stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            throw Failure(description: "recv: errno \(errno)")
        }
        buffered += chunk[..<count]
        return count > 0
    }
}
