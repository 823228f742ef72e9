import Foundation
import Testing

@testable import NavTestSupport

/// Whatever a client sends, reading it costs time and memory bounded by its size
/// (docs/design.md, "Bounded input"): YAML aliases and deep nesting are refused before anything
/// expands them.
@Suite struct BoundedInputTests {
    static let adminToken = "admin-0123456789abcdef"
    static let admin = ["Authorization": "Bearer \(adminToken)"]

    /// Nine levels of ten aliases each: ~500 bytes that stand for 10⁹ strings.
    static func bomb(keys: Bool) -> String {
        var text = "name: bomb\nstart: /top\nlevels:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        let names = Array("abcdefghi")
        for index in 1..<names.count {
            let previous = "*\(names[index - 1])"
            text += "  \(names[index]): &\(names[index]) [" + Array(repeating: previous, count: 10).joined(separator: ", ") + "]\n"
        }
        // As a value and as a mapping key (where a reader that composes first would expand it to
        // compare keys): refused at the first alias either way.
        text +=
            keys
            ? "scenes:\n  top:\n    state:\n      ? *i\n      : 1\n      ? *h\n      : 2\n" : "scenes:\n  top:\n    state: {bomb: *i}\n"
        return text
    }

    /// The daemon's resident memory, from `/proc/PID/status`.
    static func residentKilobytes(_ navd: DaemonHarness) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(navd.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    /// Sends a request on a connection that gives up after `seconds`; `nil` when no answer came in time.
    static func answer(
        _ navd: DaemonHarness, _ method: String, _ target: String, headers: [String: String], body: [UInt8], within seconds: Int
    )
        -> HTTPMessage?
    {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        guard let connection = try? HTTPConnection(port: navd.port, timeout: seconds),
            (try? connection.send(Array((head + "\r\n").utf8) + body)) != nil
        else { return nil }
        return try? connection.readResponse(method: method)
    }

    /// On the binary: what is measured is the resident memory of a process, and a daemon that
    /// expanded the bomb would be killed, not waited for.
    @Test(arguments: [false, true])
    func aYAMLAliasBombIsRefusedAtOnce(keys: Bool) throws {
        let navd = try DaemonHarness(arguments: ["--admin-token", Self.adminToken])
        let before = try #require(Self.residentKilobytes(navd))
        let text = Self.bomb(keys: keys)
        #expect(text.utf8.count < 600)
        let started = Date()
        let answer = Self.answer(
            navd, "PUT", "/v1/graphs/bomb", headers: Self.admin.merging(["Content-Type": "application/yaml"]) { $1 },
            body: Array(text.utf8), within: 3
        )
        guard let answer else {
            // Stop it now: a daemon expanding the bomb takes gigabytes and ignores SIGTERM.
            navd.crash()
            Issue.record("no answer within 3 s")
            return
        }
        #expect(Date().timeIntervalSince(started) < 1)
        navd.check(answer, method: "PUT", target: "/v1/graphs/bomb", sourceLocation: #_sourceLocation)
        #expect(answer.status == 422 && answer.code == "invalid_graph", "\(answer)")
        let issue = try answer.json()["issues"]?[0]?["message"]?.string ?? ""
        #expect(issue.contains("aliases"), "\(issue)")
        let after = try #require(Self.residentKilobytes(navd))
        #expect(after - before < 50_000, "RSS grew from \(before) KB to \(after) KB")
        #expect(try navd.request("GET", "/v1/graphs/bomb").status == 404)
        #expect(try navd.request("GET", "/healthz").status == 200)
        #expect(try navd.stop() == 0)
    }

    @Test func graphFilesFollowTheSameRules() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-bounded-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files: [(String, String)] = [
            ("bomb.yaml", Self.bomb(keys: false)), ("keys.yaml", Self.bomb(keys: true)),
            ("deep.yaml", "name: deep\nstart: /top\nscenes: {top: {state: " + String(repeating: "[", count: 100_000) + "}}\n"),
            (
                "deep.json",
                #"{"name": "deep", "start": "/top", "scenes": {"top": {"state": "# + String(repeating: "[", count: 100_000) + "}}}"
            )
        ]
        for (name, text) in files {
            let file = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            let started = Date()
            let run = try CLIProcess.navd(["validate", file.path])
            #expect(Date().timeIntervalSince(started) < 5, "\(name)")
            #expect(run.status == 1, "\(name): \(run.output) \(run.errors)")
        }
    }

    @Test func deepNestingIsRefusedWithoutRecursingIntoIt() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.adminToken, "--max-body", "4194304"])
        let yamlHeaders = Self.admin.merging(["Content-Type": "application/yaml"]) { $1 }
        let jsonHeaders = Self.admin.merging(["Content-Type": "application/json"]) { $1 }
        // YAML: flow and block nesting, within libyaml's own limit (1,000) and far past it.
        for depth in [65, 900, 100_000] {
            let flow =
                "name: deep\nstart: /top\nscenes: {top: {state: {x: " + String(repeating: "[", count: depth)
                + String(repeating: "]", count: depth) + "}}}\n"
            let answer = try navd.request("PUT", "/v1/graphs/deep", headers: yamlHeaders, body: Array(flow.utf8))
            #expect(answer.status == 422 && answer.code == "invalid_graph", "\(depth): \(answer)")
        }
        var block = "name: deep\nstart: /top\nscenes:\n"
        for level in 0..<200 { block += String(repeating: " ", count: 2 * level + 2) + "k\(level):\n" }
        let blockAnswer = try navd.request("PUT", "/v1/graphs/deep", headers: yamlHeaders, body: Array(block.utf8))
        #expect(blockAnswer.status == 422 && blockAnswer.code == "invalid_graph", "\(blockAnswer)")
        #expect(try blockAnswer.json()["issues"]?[0]?["message"]?.string?.contains("nested deeper than 64") == true, "\(blockAnswer)")
        // JSON: 100,000 '[' as a graph and as request bodies.
        let brackets = Array(String(repeating: "[", count: 100_000).utf8)
        let graph = try navd.request("PUT", "/v1/graphs/deep", headers: jsonHeaders, body: brackets)
        #expect(graph.status == 400 && graph.code == "malformed_json", "\(graph)")
        let create = try navd.request("POST", "/v1/sessions", headers: ["Content-Type": "application/json"], body: brackets)
        #expect(create.status == 400 && create.code == "malformed_json", "\(create)")
        let session = try navd.createSession()
        let navigate = try navd.request(
            "POST", session.url + "/navigate", headers: ["Content-Type": "application/json", "Authorization": "Bearer \(session.token)"],
            body: Array((#"{"path": "# + String(repeating: "[", count: 100_000)).utf8)
        )
        #expect(navigate.status == 400 && navigate.code == "malformed_json", "\(navigate)")
        // More than a million values, as JSON and as YAML (each well under the body limit).
        let many = "[" + Array(repeating: "0", count: 1_000_001).joined(separator: ",") + "]"
        let manyJSON = try navd.request("PUT", "/v1/graphs/many", headers: jsonHeaders, body: Array(many.utf8))
        #expect(manyJSON.status == 400 && manyJSON.code == "malformed_json", "\(manyJSON)")
        let manyYAML = try navd.request(
            "PUT", "/v1/graphs/many", headers: yamlHeaders, body: Array(("name: many\nstart: /top\nx: " + many).utf8))
        #expect(manyYAML.status == 422 && manyYAML.code == "invalid_graph", "\(manyYAML)")
        #expect(try manyYAML.json()["issues"]?[0]?["message"]?.string?.contains("more than 1000000 values") == true, "\(manyYAML)")
        // Nesting up to the limit still loads.
        let fine =
            "name: deep\nstart: /top\nscenes: {top: {state: {x: " + String(repeating: "[", count: 50) + String(repeating: "]", count: 50)
            + "}}}\n"
        #expect(try navd.request("PUT", "/v1/graphs/deep", headers: yamlHeaders, body: Array(fine.utf8)).status == 201)
        #expect(try navd.stop() == 0)
    }
}
