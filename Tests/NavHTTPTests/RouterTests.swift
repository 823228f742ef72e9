import NavJSON
import Testing

@testable import NavHTTP
@testable import NavTestSupport

/// Routes match on the path's bytes; captured segments are percent-decoded and must be UTF-8.
@Suite struct RouterTests {
    static let responder: Responder = {
        var router = Router()
        router.on("GET", "/v1/sessions/{id}")
        router.on("DELETE", "/v1/sessions/{id}")
        router.on("PUT", "/v1/sessions/{id}/screens/{screen}/params")
        return router.freeze()
    }()

    /// The captured parameters of a found route, or nil.
    static func captured(_ method: String, _ path: String) -> [String: String]? {
        guard case .found(_, _, let parameters) = responder.match(method: method, path: path) else { return nil }
        var result: [String: String] = [:]
        for name in ["id", "screen"] { result[name] = parameters[name] }
        return result
    }

    @Test(arguments: [
        ("/v1/sessions/0f3a9c", "0f3a9c"),
        ("/v1/sessions/a%20b", "a b"),
        ("/v1/sessions/a%2Fb", "a/b"),
        ("/v1/sessions/%C3%A9t%C3%A9", "été"),
        ("/v1/sessions/\u{E9}t\u{E9}", "été"),
        ("/v1/sessions/100%25", "100%")
    ])
    func segmentsAreCapturedDecoded(path: String, id: String) {
        #expect(Self.captured("GET", path) == ["id": id])
    }

    @Test func twoParametersAreCapturedInPlace() {
        #expect(Self.captured("PUT", "/v1/sessions/s1/screens/e%33/params") == ["id": "s1", "screen": "e3"])
    }

    @Test(arguments: [
        "/v1/sessions/%", "/v1/sessions/%4", "/v1/sessions/%zz", "/v1/sessions/%ff%fe", "/v1/sessions/%C3%28", "/v1/sessions/",
        "/v1/sessions"
    ])
    func brokenOrEmptySegmentsMatchNothing(path: String) {
        guard case .notFound = Self.responder.match(method: "GET", path: path) else {
            Issue.record("\(path) matched a route")
            return
        }
    }

    @Test func aPathOfAnotherMethodNamesTheAllowedOnes() {
        guard case .methodNotAllowed(_, let template, let allowed) = Self.responder.match(method: "POST", path: "/v1/sessions/s1") else {
            Issue.record("expected 405")
            return
        }
        #expect(template == "/v1/sessions/{id}")
        #expect(allowed == ["GET", "HEAD", "DELETE"])
    }

    /// Bytes that are not UTF-8 (a path reaches the router as a `String`, so only escapes can
    /// carry them, but the decoder is checked on raw bytes too) decode to nothing.
    @Test func invalidUTF8DecodesToNothing() {
        #expect([UInt8](arrayLiteral: 0x61, 0xFF, 0x62).withUnsafeBufferPointer { PercentDecoding.decode($0, strict: true) } == nil)
        #expect(Array("a%FFb".utf8).withUnsafeBufferPointer { PercentDecoding.decode($0, strict: true) } == nil)
        #expect(Array("plain-ascii_1.2~".utf8).withUnsafeBufferPointer { PercentDecoding.decode($0, strict: true) } == "plain-ascii_1.2~")
    }
}
