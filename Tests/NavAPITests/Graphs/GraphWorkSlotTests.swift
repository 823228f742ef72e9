import Foundation
import Logging
import NavHTTP
import NavJSON
import Testing

@testable import NavAPI
@testable import NavSessions
@testable import NavTestSupport

/// An admin's upgrade of every session of a graph, and the removal of a version (which reads
/// them all to see none runs on it), are work that grows with the graph's sessions: each holds a
/// slot of `graph_work` while it runs, as diagrams and uploads do (docs/design.md, "Heavy graph
/// work"), so that many of them never hold every request thread.
@Suite struct GraphWorkSlotTests {
    static let admin = "graph-work-slot-admin-0123"

    static func send(
        _ application: Application, _ method: String, _ path: String, query: [String: String] = [:], body: String = "{}"
    ) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("content-type", "application/json")
        headers.add("authorization", "Bearer \(admin)")
        return application.handle(HTTPRequest(method: method, path: path, query: query, headers: headers, body: Array(body.utf8)))
    }

    @Test func upgradesAndRemovalsWaitForASlotOfHeavyWork() throws {
        var configuration = Application.Configuration()
        configuration.adminToken = Self.admin
        configuration.maxGraphWork = 1
        let application = Application(configuration: configuration, store: MemoryStore(), logger: Logger(label: "test"))
        let first = try #require(try TestFixtures.newsVariant("first"))
        let second = try #require(try TestFixtures.newsVariant("second"))
        let third = try #require(try TestFixtures.newsVariant("third"))
        for document in [first, second] {
            let put = Self.send(application, "PUT", "/v1/graphs/news", body: document.text)
            #expect(put.status == 200 || put.status == 201, "\(put.status)")
        }
        #expect(Self.send(application, "POST", "/v1/sessions", body: #"{"graph":"news"}"#).status == 201)
        let work = try #require(application.budgets.all.first { $0.resource == "graph_work" })

        // The one slot is held: both are refused, and change nothing.
        #expect(work.acquire())
        let upgrade = Self.send(application, "POST", "/v1/graphs/news/upgrade", body: #"{"version":1}"#)
        let removal = Self.send(application, "DELETE", "/v1/graphs/news", query: ["version": "1"])
        for answer in [upgrade, removal] {
            #expect(answer.status == 503, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect((try? JSONValue(parsing: answer.body))?["code"]?.stringValue == "over_capacity")
            #expect(answer.headers.contains { $0.0.lowercased() == "retry-after" })
        }
        work.release()

        // Free: both run, and give their slot back.
        let put = Self.send(application, "PUT", "/v1/graphs/news", body: third.text)
        #expect(put.status == 200 || put.status == 201)
        let upgraded = Self.send(application, "POST", "/v1/graphs/news/upgrade", body: "{}")
        #expect(upgraded.status == 200, "\(String(decoding: upgraded.body, as: UTF8.self))")
        #expect(Self.send(application, "DELETE", "/v1/graphs/news", query: ["version": "1"]).status == 204)
        #expect(work.used == 0)
    }
}
