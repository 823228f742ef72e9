import NavCore
import Testing

@testable import NavTestSupport

/// The validator itself: it must refuse what the spec refuses, or every contract check
/// built on it would pass vacuously.
@Suite struct OpenAPIValidatorTests {
    let validator: OpenAPIValidator

    init() throws {
        validator = try OpenAPIValidator.shared.get()
    }

    static let problem: JSON = [
        "type": "urn:navd:problem:invalid_path", "title": "Invalid path", "status": 400, "detail": "empty key",
        "code": "invalid_path", "offset": 4
    ]

    static func problem(_ code: String, _ extra: [String: JSON] = [:], removing: [String] = []) -> JSON {
        var members: [String: JSON] = [
            "type": .string("urn:navd:problem:\(code)"), "title": "T", "status": 400, "detail": "d", "code": .string(code)
        ]
        for (key, value) in extra { members[key] = value }
        for key in removing { members[key] = nil }
        return .object(members)
    }

    @Test func theSpecLoadsAndUsesOnlyKeywordsTheValidatorImplements() {
        #expect(validator.operations.count >= 17)
        #expect(validator.unsupportedKeywords() == [])
    }

    @Test func jsonKeepsIntegersNumbersAndBooleansApart() throws {
        let value = try JSON(parsing: #"[1, 1.5, true, null, "x", {"a": null}, -0, 12345678901]"#)
        #expect(value == [1, 1.5, true, nil, "x", ["a": nil], 0, 12_345_678_901])
        #expect(try JSON(parsing: #""a\u00e9\ud83d\ude00\n""#) == "aé😀\n")
        for text in [
            "[1,]", "{'a': 1}", "01", "NaN", "1e999", #""\ud800""#, #"{"a":1,"a":2}"#, "[1] x", "", "\"\u{01}\"",
            "[" + String(repeating: "[", count: 600)
        ] {
            #expect(throws: (any Error).self, "\(text) was accepted") { try JSON(parsing: text) }
        }
        #expect(throws: (any Error).self) { try JSON(parsing: [0x22, 0xFF, 0x22]) }
    }

    @Test func aValidProblemConforms() throws {
        let schema = try #require(validator.schema(named: "Problem"))
        #expect(validator.validate(Self.problem, against: schema) == [])
        #expect(validator.validate(Self.problem("invalid_params", ["param": "id"]), against: schema) == [])
        #expect(validator.validate(Self.problem("invalid_params"), against: schema) == [])
        #expect(validator.validate(Self.problem("not_found"), against: schema) == [])
        // The set of codes grows: a code a later daemon adds is still a problem's code.
        #expect(validator.validate(Self.problem("quota_exceeded"), against: schema) == [])
    }

    @Test(
        arguments: [
            ("invalid_path without offset", problem("invalid_path")),
            ("offset on another code", problem("not_found", ["offset": 3])),
            ("param on another code", problem("forbidden", ["param": "id"])),
            ("invalid_graph without issues", problem("invalid_graph")),
            ("issues on another code", problem("not_found", ["issues": []])),
            ("a code that is not a code's shape", problem("Teapot!", ["type": "urn:navd:problem:teapot"])),
            ("a member the schema does not know", problem("not_found", ["extra": 1])),
            ("status as a string", problem("not_found", ["status": "400"])),
            ("status below 400", problem("not_found", ["status": 200])),
            ("type not a navd urn", problem("not_found", ["type": "about:blank"])),
            ("detail missing", problem("not_found", removing: ["detail"])),
            ("negative offset", problem("invalid_path", ["offset": -1])),
            ("offset not an integer", problem("invalid_path", ["offset": 1.5])),
            ("an issue without pointer", problem("invalid_graph", ["issues": [["code": "x", "message": "m", "severity": "error"]]])),
            (
                "an issue of unknown severity",
                problem("invalid_graph", ["issues": [["pointer": "", "code": "x", "message": "m", "severity": "fatal"]]])
            )
        ] as [(String, JSON)])
    func anInvalidProblemIsRefused(_ what: String, _ value: JSON) throws {
        let schema = try #require(validator.schema(named: "Problem"))
        #expect(!validator.validate(value, against: schema).isEmpty, "\(what) was accepted")
    }

    static let screen: JSON = [
        "id": "e2", "scene": "home", "segue": "/", "container": "none", "params": ["n": 1, "s": "x", "b": true, "d": 1.5],
        "deps": [:], "state": ["anything": [1, nil]],
        "tabs": [
            "selected": "friend",
            "saved": [
                "profile": [["id": "e5", "scene": "profile", "segue": "#", "container": "none", "params": [:], "deps": [:], "state": [:]]]
            ]
        ]
    ]

    @Test func screensAndEventsAreCheckedDeeply() throws {
        let screen = try #require(validator.schema(named: "Screen"))
        let event = try #require(validator.schema(named: "Event"))
        #expect(validator.validate(Self.screen, against: screen) == [])

        var badID = Self.screen.object ?? [:]
        badID["id"] = "x1"
        #expect(validator.validate(.object(badID), against: screen).first?.contains("/id") == true)
        var badSegue = Self.screen.object ?? [:]
        badSegue["segue"] = "?"
        #expect(!validator.validate(.object(badSegue), against: screen).isEmpty)
        var badParam = Self.screen.object ?? [:]
        badParam["params"] = ["n": nil]
        #expect(!validator.validate(.object(badParam), against: screen).isEmpty)
        var nestedBad = Self.screen.object ?? [:]
        nestedBad["tabs"] = ["selected": "friend", "saved": ["profile": [["id": "e5"]]]]
        let nestedErrors = validator.validate(.object(nestedBad), against: screen)
        #expect(nestedErrors.contains { $0.contains("/tabs/saved/profile/0") })
        var noSaved = Self.screen.object ?? [:]
        noSaved["tabs"] = ["selected": "friend"]
        #expect(!validator.validate(.object(noSaved), against: screen).isEmpty)

        #expect(
            validator.validate(
                ["seq": 1, "type": "transitionStart", "screen": nil, "scene": nil, "transition": 1, "from": "", "to": "/top"],
                against: event) == [])
        #expect(!validator.validate(["seq": 1, "type": "awake", "screen": 3, "scene": "top", "transition": 1], against: event).isEmpty)
        #expect(!validator.validate(["seq": 0, "type": "awake", "screen": "e1", "scene": "top", "transition": 1], against: event).isEmpty)
        #expect(!validator.validate(["seq": 1, "type": "appear", "screen": "e1", "scene": "top", "transition": 1], against: event).isEmpty)
        #expect(!validator.validate(["seq": 1, "type": "awake", "screen": "e1", "transition": 1], against: event).isEmpty)
    }

    @Test func everyImplementedKeywordConstrains() {
        let cases: [(JSON, JSON, Bool)] = [
            (["type": ["string", "null"]], nil, true),
            (["type": ["string", "null"]], 1, false),
            (["type": "integer"], 1.0, true),
            (["type": "integer"], 1.5, false),
            (["type": "number"], 1, true),
            (["type": "boolean"], 0, false),
            (["const": "a"], "b", false),
            (["enum": [1, "x"]], 1.0, true),
            (["minLength": 2, "maxLength": 3], "a", false),
            (["minLength": 2, "maxLength": 3], "abcd", false),
            (["minLength": 2, "maxLength": 3], "ab", true),
            (["pattern": "^a+$"], "aab", false),
            (["pattern": "b"], "abc", true),
            (["minimum": 1, "maximum": 3], 0, false),
            (["minimum": 1, "maximum": 3], 4, false),
            (["exclusiveMinimum": 1], 1, false),
            (["minItems": 1], [], false),
            (["maxItems": 1], [1, 2], false),
            (["items": ["type": "string"]], ["a", 1], false),
            (["minProperties": 1], [:], false),
            (["propertyNames": ["pattern": "^[a-z]+$"]], ["ok": 1, "Not ok": 2], false),
            (["propertyNames": ["pattern": "^[a-z]+$"]], ["ok": 1], true),
            (["required": ["a"]], ["b": 1], false),
            (["properties": ["a": ["type": "string"]]], ["a": 1], false),
            (["additionalProperties": ["type": "integer"]], ["a": "x"], false),
            (["additionalProperties": false, "properties": ["a": true]], ["a": 1], true),
            (["oneOf": [["type": "integer"], ["type": "number"]]], 1, false),
            (["oneOf": [["type": "integer"], ["type": "string"]]], 1, true),
            (["anyOf": [["type": "integer"], ["type": "string"]]], true, false),
            (["allOf": [["minimum": 1], ["maximum": 2]]], 3, false),
            (["not": ["type": "string"]], "a", false),
            (["if": ["const": 1], "then": false, "else": true], 1, false),
            (["if": ["const": 1], "then": false, "else": true], 2, true),
            (["$ref": "#/components/schemas/SessionGraph"], ["name": "n", "version": 0], false),
            (["$ref": "#/components/schemas/Nope"], 1, false),
            (false, 1, false),
            (true, 1, true)
        ]
        for (schema, value, valid) in cases {
            let errors = validator.validate(value, against: schema)
            #expect(errors.isEmpty == valid, "\(value) against \(schema): \(errors)")
        }
    }

    @Test func templatesMatchConcretePaths() {
        #expect(validator.template(for: "/v1/sessions") == "/v1/sessions")
        #expect(validator.template(for: "/v1/sessions/abc") == "/v1/sessions/{id}")
        #expect(validator.template(for: "/v1/sessions/abc/events?after=3") == "/v1/sessions/{id}/events")
        #expect(validator.template(for: "/v1/sessions/abc/screens/e1/state") == "/v1/sessions/{id}/screens/{screen}/state")
        #expect(validator.template(for: "/v1/sessions/") == nil)
        #expect(validator.template(for: "/v1/sessions/a/b") == nil)
        #expect(validator.template(for: "healthz") == nil)
    }

    static let ok: [String: String] = ["content-type": "application/json", "x-request-id": "r-1"]

    @Test func answersAreCheckedAgainstTheirOperation() {
        let healthy = Array(#"{"status":"ok"}"#.utf8)
        #expect(validator.validate(method: "GET", path: "/healthz", status: 200, headers: Self.ok, body: healthy) == [])
        // Status not declared, header missing, wrong media type, wrong body.
        #expect(!validator.validate(method: "GET", path: "/healthz", status: 201, headers: Self.ok, body: healthy).isEmpty)
        #expect(
            !validator.validate(method: "GET", path: "/healthz", status: 200, headers: ["content-type": "application/json"], body: healthy)
                .isEmpty)
        #expect(
            !validator.validate(
                method: "GET", path: "/healthz", status: 200, headers: ["content-type": "text/plain", "x-request-id": "r"], body: healthy
            ).isEmpty)
        #expect(
            !validator.validate(method: "GET", path: "/healthz", status: 200, headers: Self.ok, body: Array(#"{"status":1}"#.utf8)).isEmpty)
        #expect(!validator.validate(method: "GET", path: "/healthz", status: 200, headers: Self.ok, body: Array("ok".utf8)).isEmpty)
        // ETag is required on a session and has a pattern.
        let view = Array(
            #"{"actions":{"back":0,"exit":false,"links":[]},"id":"a","graph":{"name":"news","version":1},"version":1,"path":"/top","screens":[],"context":{}}"#
                .utf8)
        #expect(
            validator.validate(
                method: "GET", path: "/v1/sessions/a", status: 200, headers: Self.ok.merging(["etag": "\"1\""]) { $1 }, body: view) == [])
        #expect(!validator.validate(method: "GET", path: "/v1/sessions/a", status: 200, headers: Self.ok, body: view).isEmpty)
        #expect(
            !validator.validate(
                method: "GET", path: "/v1/sessions/a", status: 200, headers: Self.ok.merging(["etag": "1"]) { $1 }, body: view
            ).isEmpty)
        // 204 has no body.
        #expect(validator.validate(method: "DELETE", path: "/v1/sessions/a", status: 204, headers: ["x-request-id": "r"], body: []) == [])
        #expect(
            !validator.validate(method: "DELETE", path: "/v1/sessions/a", status: 204, headers: ["x-request-id": "r"], body: [1]).isEmpty)
    }

    @Test func unknownRoutesAndMethodsMustBe404And405() {
        let problem = ["content-type": "application/problem+json", "x-request-id": "r"]
        let notFound = Array(
            #"{"type":"urn:navd:problem:not_found","title":"Not found","status":404,"detail":"d","code":"not_found"}"#.utf8)
        let notAllowed = Array(
            #"{"type":"urn:navd:problem:method_not_allowed","title":"M","status":405,"detail":"d","code":"method_not_allowed"}"#.utf8)
        #expect(validator.validate(method: "GET", path: "/nope", status: 404, headers: problem, body: notFound) == [])
        #expect(!validator.validate(method: "GET", path: "/nope", status: 200, headers: problem, body: notFound).isEmpty)
        #expect(
            !validator.validate(
                method: "GET", path: "/nope", status: 404, headers: problem,
                body: Array(
                    #"{"type":"urn:navd:problem:session_not_found","title":"N","status":404,"detail":"d","code":"session_not_found"}"#.utf8)
            ).isEmpty)
        #expect(
            validator.validate(
                method: "PUT", path: "/healthz", status: 405, headers: problem.merging(["allow": "GET, HEAD"]) { $1 }, body: notAllowed)
                == [])
        #expect(
            !validator.validate(
                method: "PUT", path: "/healthz", status: 405, headers: problem.merging(["allow": "GET"]) { $1 }, body: notAllowed
            ).isEmpty)
        #expect(!validator.validate(method: "PUT", path: "/healthz", status: 405, headers: problem, body: notAllowed).isEmpty)
        #expect(
            !validator.validate(
                method: "PUT", path: "/healthz", status: 405, headers: problem.merging(["allow": "GET, POST"]) { $1 }, body: notAllowed
            ).isEmpty)
        #expect(
            !validator.validate(method: "PUT", path: "/healthz", status: 200, headers: Self.ok, body: Array(#"{"status":"ok"}"#.utf8))
                .isEmpty)
    }

    @Test func theHarnessRecordsEveryViolationAsAnIssue() {
        let answer = HTTPMessage(status: 200, headers: ["content-type": "application/json"], body: Array(#"{"status":1}"#.utf8))
        withKnownIssue {
            DaemonHarness.recordViolations(
                of: answer, method: "GET", target: "/healthz", validator: validator, sourceLocation: #_sourceLocation)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.hasPrefix("spec violation: GET /healthz → 200") }
        }
        let fine = HTTPMessage(status: 200, headers: Self.ok, body: Array(#"{"status":"ok"}"#.utf8))
        DaemonHarness.recordViolations(of: fine, method: "GET", target: "/healthz", validator: validator, sourceLocation: #_sourceLocation)
    }
}
