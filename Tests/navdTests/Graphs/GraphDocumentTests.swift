import Logging
import NavCore
import NavJSON
@testable import navd
@testable import NavHTTP
@testable import NavServer
import Testing

/// YAML graph documents read into JSON values as the daemon reads them (`--graph FILE.yaml`,
/// `PUT /v1/graphs/{name}` as `application/yaml`).
@Suite struct GraphDocumentTests {
    /// YAML 1.1 base-60 integers whose digits overflow an `Int` (the value, or only the power of
    /// 60 computed past the last digit) trapped inside Yams and took the daemon down; found by
    /// the graph fuzz target (`-922337203685477580:7`). navd reads YAML 1.2's core schema now,
    /// which has no base-60 numbers: they are text, and the document loads.
    @Test(arguments: [
        "-922337203685477580:7", "9223372036854775807:0", "153722867280912931:0",
        "1:0:0:0:0:0:0:0:0:0:0:0", "-1:0:0:0:0:0:0:0:0:0:0:0:0:0:0", "1:2:3:4:5:6:7:8:9:10:11:12:13",
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
        ("0x1F", .int(31)), ("0o17", .int(15)), ("12", .int(12)), ("-12", JSONValue.int(-12)),
    ])
    func baseSixtyScalarsAreTextAndRadixPrefixesIntegers(_ scalar: String, _ expected: JSONValue) throws {
        let value = try GraphDocument.yaml("n: \(scalar)")
        #expect(value["n"] == expected)
    }

    /// Through the whole request: an upload carrying such a scalar is answered, and the daemon
    /// goes on answering.
    @Test func uploadingAGraphWithAnOverflowingBaseSixtyIntegerIsAnswered() throws {
        let application = Application(configuration: .init(adminToken: "admin-token-0123456789"), store: MemoryStore(), logger: Logger(label: "test"))
        let body = "name: g\nstart: /a\nscenes:\n  a:\n    state: {n: -922337203685477580:7}\n"
        let upload = application.handle(HTTPRequest(
            method: "PUT", path: "/v1/graphs/g",
            headers: ["authorization": "Bearer admin-token-0123456789", "content-type": "application/yaml"], body: Array(body.utf8)
        ))
        #expect(upload.status == 201)
        let read = application.handle(HTTPRequest(method: "GET", path: "/v1/graphs/g"))
        #expect(read.status == 200)
    }
}
