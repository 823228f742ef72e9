import Logging
import NavCore
import NavJSON
import Testing

@testable import NavAPI
@testable import NavHTTP
@testable import NavSessions
@testable import NavTestSupport

/// YAML graph documents read into JSON values as the daemon reads them (`--graph FILE.yaml`,
/// `PUT /v1/graphs/{name}` as `application/yaml`).
@Suite struct GraphDocumentTests {
    /// YAML 1.1 base-60 integers whose digits overflow an `Int` (the value, or only the power of
    /// 60 computed past the last digit) trapped inside Yams and took the daemon down; found by
    /// the graph fuzz target (`-922337203685477580:7`). navd reads YAML 1.2's core schema now,
    /// which has no base-60 numbers: they are text, and the document loads.
    @Test(arguments: [
        "-922337203685477580:7", "9223372036854775807:0", "153722867280912931:0",
        "1:0:0:0:0:0:0:0:0:0:0:0", "-1:0:0:0:0:0:0:0:0:0:0:0:0:0:0", "1:2:3:4:5:6:7:8:9:10:11:12:13"
    ])
    func baseSixtyIntegersTooLargeForAnIntReadWithoutTrapping(_ scalar: String) throws {
        let value = try GraphDocument.yaml("{name: g, start: /a, scenes: {a: {state: {n: \(scalar)}}}}")
        let read = try #require(value["scenes"]?["a"]?["state"]?["n"])
        #expect(read == .string(scalar), "\(read)")
        // Still a document: as a graph it loads, its state holding what was read.
        #expect(throws: Never.self) { try Graph.decode(value) }
    }

    /// What Yams read as base-60 integers is text under YAML 1.2's core schema; its radix
    /// prefixes and decimal integers read as before.
    @Test(arguments: [
        ("1:30", .string("1:30")), ("-1:30", .string("-1:30")), ("+1:30", .string("+1:30")), ("1_0:00", .string("1_0:00")),
        ("190:20:30", .string("190:20:30")), ("2562047788015215:30:7", .string("2562047788015215:30:7")),
        ("0x1F", .int(31)), ("0o17", .int(15)), ("12", .int(12)), ("-12", JSONValue.int(-12))
    ])
    func baseSixtyScalarsAreTextAndRadixPrefixesIntegers(_ scalar: String, _ expected: JSONValue) throws {
        let value = try GraphDocument.yaml("n: \(scalar)")
        #expect(value["n"] == expected)
    }

    /// Through the whole request: an upload carrying such a scalar is answered, and the daemon
    /// goes on answering.
    @Test func uploadingAGraphWithAnOverflowingBaseSixtyIntegerIsAnswered() throws {
        let application = Application(
            configuration: .init(adminToken: "admin-token-0123456789"), store: MemoryStore(), logger: Logger(label: "test"))
        let body = "name: g\nstart: /a\nscenes:\n  a:\n    state: {n: -922337203685477580:7}\n"
        let upload = application.handle(
            HTTPRequest(
                method: "PUT", path: "/v1/graphs/g",
                headers: ["authorization": "Bearer admin-token-0123456789", "content-type": "application/yaml"], body: Array(body.utf8)
            ))
        #expect(upload.status == 201)
        let read = application.handle(HTTPRequest(method: "GET", path: "/v1/graphs/g"))
        #expect(read.status == 200)
    }

    /// What the YAML reader refuses is a 422 `invalid_graph` whose one issue names the line and
    /// column, and nothing is stored: a key given twice, an alias, a number JSON cannot hold,
    /// bytes that are not UTF-8 (which were read as U+FFFD before).
    @Test(arguments: [
        (
            Array("name: g\nstart: /a\nscenes:\n  a: {}\n  a: {}\n".utf8),
            "line 5, column 3: the key 'a' is given twice in one mapping (first at line 4)"
        ),
        (Array("name: g\nstart: /a\nx: &x 1\nscenes: {a: {state: {n: *x}}}\n".utf8), "line 4, column 25: YAML aliases"),
        (Array("name: g\nstart: /a\nscenes: {a: {state: {n: .inf}}}\n".utf8), "line 3, column 25: '.inf' is infinite"),
        (
            Array("name: g\nstart: /a\nscenes: {a: {state: {n: ".utf8) + [0xC3, 0x28] + Array("}}}\n".utf8),
            "line 3, column 26: invalid trailing UTF-8 octet"
        )
    ])
    func unreadableYAMLIsAnInvalidGraphWithItsPosition(_ body: [UInt8], _ message: String) throws {
        let application = Application(
            configuration: .init(adminToken: "admin-token-0123456789"), store: MemoryStore(), logger: Logger(label: "test"))
        let upload = application.handle(
            HTTPRequest(
                method: "PUT", path: "/v1/graphs/g",
                headers: ["authorization": "Bearer admin-token-0123456789", "content-type": "application/yaml"], body: body
            ))
        #expect(upload.status == 422)
        let problem = try JSON(parsing: upload.body)
        #expect(problem["code"] == .string("invalid_graph"))
        let issue = try #require(problem["issues"]?.array?.first)
        #expect(issue["pointer"] == .string(""))
        #expect(issue["message"]?.string?.hasPrefix("not valid YAML: " + message) == true, "\(issue)")
        #expect(application.handle(HTTPRequest(method: "GET", path: "/v1/graphs/g")).status == 404)
    }
}
