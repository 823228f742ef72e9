import Foundation
import Logging
import Testing

@testable import NavAPI
@testable import NavSessions
@testable import NavTestSupport

private let contractAdminToken = "contract-admin-token-0123"

/// The spec and the daemon agree: the served document is the repository's, every operation
/// of the spec is routed, and every route of the daemon is in the spec.
@Suite(.sharedDaemon(arguments: ["--admin-token", contractAdminToken]))
struct OpenAPIContractTests {
    static let admin = ["Authorization": "Bearer \(contractAdminToken)"]

    /// Against the binary: what it serves is what was compiled into it, so a stale build shows.
    @Test func theServedDocumentIsTheRepositorysOpenAPIYAML() throws {
        let navd = try DaemonHarness()
        defer { _ = try? navd.stop() }
        let served = try navd.request("GET", "/openapi.yaml")
        #expect(served.status == 200)
        let file = try Data(contentsOf: OpenAPIValidator.specURL)
        let bytes = Array(file)
        #expect(
            served.body == bytes,
            "GET /openapi.yaml (\(served.body.count) bytes) differs from openapi.yaml (\(bytes.count) bytes): rebuild navd, which compiles the file in"
        )
        #expect(try JSON(yaml: served.text) == OpenAPIValidator.shared.get().document)
    }

    /// A well-formed request for every operation of the spec gets its success status.
    @Test func everyOperationOfTheSpecIsRoutedAndSucceeds() throws {
        let navd = try DaemonHarness.shared()
        let validator = try OpenAPIValidator.shared.get()
        let news = try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))

        typealias Request = (method: String, target: String, headers: [String: String], body: [UInt8], status: Int)
        func request(for operation: OpenAPIValidator.Operation) throws -> Request? {
            // A fresh session one screen deep, so every intent has something to act on.
            let session = try navd.createSession(start: "/top/list_news")
            let auth = ["Authorization": "Bearer \(session.token)"]
            let json = auth.merging(["Content-Type": "application/json"]) { $1 }
            let target = operation.template
                .replacingOccurrences(of: "{id}", with: session.id)
                .replacingOccurrences(of: "{screen}", with: "e2")
                .replacingOccurrences(of: "{name}", with: "news")
                .replacingOccurrences(of: "{file}", with: "app.js")
            switch operation.operationID {
            case "createSession": return ("POST", target, ["Content-Type": "application/json"], Array("{}".utf8), 201)
            case "listSessions": return ("GET", target, Self.admin, [], 200)
            case "getSession": return ("GET", target, auth, [], 200)
            case "deleteSession": return ("DELETE", target, auth, [], 204)
            case "navigate": return ("POST", target, json, Array(#"{"path":"show_news(id=1)"}"#.utf8), 200)
            case "applyTransition": return ("POST", target, json, Array(#"{"name":"show","params":{"id":2}}"#.utf8), 200)
            case "exitScene": return ("POST", target, auth, [], 200)
            case "goBack": return ("POST", target, json, Array(#"{"count":1}"#.utf8), 200)
            case "setParams": return ("PUT", target, json, Array(#"{"category":4}"#.utf8), 200)
            case "patchState":
                return (
                    "PATCH", target, auth.merging(["Content-Type": "application/merge-patch+json"]) { $1 }, Array(#"{"seen":true}"#.utf8),
                    200
                )
            case "listEvents": return ("GET", target + "?after=0&limit=10", auth, [], 200)
            case "readHistory": return ("GET", target + "?after=0&limit=10", auth, [], 200)
            case "patchContext":
                return (
                    "PATCH", target, auth.merging(["Content-Type": "application/merge-patch+json"]) { $1 }, Array(#"{"user":"u1"}"#.utf8),
                    200
                )
            case "upgradeSession": return ("POST", target, json, Array("{}".utf8), 200)
            case "upgradeGraphSessions": return ("POST", target, Self.admin, [], 200)
            case "applyBatch":
                return ("POST", target, json, Array(#"{"intents":[{"navigate":"show_news(id=1)"},{"back":1,"result":7}]}"#.utf8), 200)
            case "runCommand", "confirm":
                // A form with unsaved text: its command runs, and leaving it asks first.
                let form = try navd.createSession(start: "/top/edit_profile")
                let formJSON = ["Authorization": "Bearer \(form.token)", "Content-Type": "application/json"]
                let typed = try navd.request(
                    "POST", form.url + "/screens/e2/commands", headers: formJSON, body: Array(#"{"name":"type","args":{"text":"hi"}}"#.utf8)
                )
                guard operation.operationID == "confirm" else {
                    return ("POST", form.url + "/screens/e2/commands", formJSON, Array(#"{"name":"type","args":{"text":"ho"}}"#.utf8), 200)
                }
                #expect(typed.status == 200, "\(typed)")
                let asked = try navd.request("POST", form.url + "/exit", headers: formJSON, body: [])
                let token = try asked.json()["confirmation"]?["token"]?.string ?? ""
                return ("POST", form.url + "/confirm", formJSON, Array(#"{"token":"\#(token)"}"#.utf8), 200)
            case "listGraphs", "getGraph", "getGraphDiagram", "health", "ready", "metrics", "getOpenAPI", "getWebClient",
                "getWebClientFile":
                return ("GET", target, [:], [], 200)
            case "getWebClientRedirect": return ("GET", target, [:], [], 308)
            case "listWebhooks": return ("GET", target, Self.admin, [], 200)
            case "readFeed": return ("GET", target + "?limit=10&form=full", Self.admin, [], 200)
            case "getGraphTraffic": return ("GET", target + "?since=2026-01-01T00:00:00Z", Self.admin, [], 200)
            case "getGraphFunnel": return ("GET", target + "?steps=top,list_news&within=30m", Self.admin, [], 200)
            case "purgeFeed":
                let session = try navd.createSession()
                return (
                    "POST", target, Self.admin.merging(["Content-Type": "application/json"]) { $1 },
                    Array(#"{"session":"\#(session.id)"}"#.utf8), 200
                )
            case "putGraph": return ("PUT", target, Self.admin.merging(["Content-Type": "application/json"]) { $1 }, Array(news), 200)
            case "deleteGraphVersion":
                // A graph of its own with two versions: the first, which no session runs on, goes.
                let admin = Self.admin.merging(["Content-Type": "application/json"]) { $1 }
                let name = "removable-\(UUID().uuidString.prefix(8))"
                for scene in ["a", "b"] {
                    let document = #"{"name":"\#(name)","start":"/\#(scene)","scenes":{"\#(scene)":{}}}"#
                    let stored = try navd.request("PUT", "/v1/graphs/\(name)", headers: admin, body: Array(document.utf8))
                    #expect(stored.status == 200 || stored.status == 201, "\(stored)")
                }
                return ("DELETE", "/v1/graphs/\(name)?version=1", Self.admin, [], 204)
            default: return nil
            }
        }

        for operation in validator.operations {
            guard let sent = try request(for: operation) else {
                Issue.record(
                    "no well-formed request is known for \(operation.operationID) (\(operation.method) \(operation.template)): add one here"
                )
                continue
            }
            #expect(sent.method == operation.method, "\(operation.operationID)")
            let answer = try navd.request(sent.method, sent.target, headers: sent.headers, body: sent.body)
            #expect(
                !(answer.status == 404 && answer.code == "not_found"),
                "\(operation.operationID): the daemon has no route for \(operation.template)")
            #expect(answer.status == sent.status, "\(operation.operationID): \(answer)")
        }
    }

    /// Methods the spec does not declare on a path answer 405, with `Allow` naming exactly the
    /// spec's methods (the validator checks `Allow`).
    @Test func undeclaredMethodsAnswer405WithTheSpecsMethods() throws {
        let navd = try DaemonHarness.shared()
        let validator = try OpenAPIValidator.shared.get()
        let session = try navd.createSession()
        let templates = Set(validator.operations.map(\.template))
        for template in templates.sorted() {
            let target = template.replacingOccurrences(of: "{id}", with: session.id)
                .replacingOccurrences(of: "{screen}", with: "e1").replacingOccurrences(of: "{name}", with: "news")
                .replacingOccurrences(of: "{file}", with: "app.js")
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] where !validator.methods(of: template).contains(method) {
                let answer = try navd.request(method, target, headers: ["Authorization": "Bearer \(session.token)"])
                #expect(answer.status == 405, "\(method) \(template): \(answer)")
                #expect(answer.code == "method_not_allowed")
            }
        }
    }

    /// The daemon's route table (built in-process, as the binary builds it) is exactly the spec's.
    @Test func theRouteTableIsExactlyTheSpecsOperations() throws {
        let validator = try OpenAPIValidator.shared.get()
        let application = Application(configuration: .init(), store: MemoryStore(), logger: Logger(label: "contract-test"))
        let routes = Set(application.routeTemplates.map { "\($0.method) \($0.template)" })
        let operations = Set(validator.operations.map { "\($0.method) \($0.template)" })
        #expect(routes.subtracting(operations).sorted() == [], "routes the spec does not declare")
        #expect(operations.subtracting(routes).sorted() == [], "operations the daemon does not route")
        #expect(routes.count == application.routeTemplates.count, "a route is registered twice")
    }

    /// Every example in the spec conforms to its own schema, so the examples document real answers.
    @Test func theSpecsExamplesConformToTheirSchemas() throws {
        let validator = try OpenAPIValidator.shared.get()
        var checked = 0
        func visit(_ value: JSON, _ pointer: String) {
            guard case .object(let members) = value else {
                if case .array(let elements) = value {
                    for (index, element) in elements.enumerated() { visit(element, pointer + "/\(index)") }
                }
                return
            }
            if let schema = members["schema"] {
                if let example = members["example"] {
                    checked += 1
                    for error in validator.validate(example, against: schema) { Issue.record("\(pointer)/example: \(error)") }
                }
                for (name, example) in members["examples"]?.object ?? [:] {
                    guard let value = example["value"] else { continue }
                    checked += 1
                    for error in validator.validate(value, against: schema) { Issue.record("\(pointer)/examples/\(name): \(error)") }
                }
            }
            for (key, member) in members where key != "example" && key != "examples" {
                visit(member, pointer + "/" + key)
            }
        }
        visit(validator.document["paths"] ?? .null, "/paths")
        visit(validator.document["components"]?["responses"] ?? .null, "/components/responses")
        visit(validator.document["components"]?["parameters"] ?? .null, "/components/parameters")
        for (name, schema) in validator.document["components"]?["schemas"]?.object ?? [:] {
            if let example = schema["example"] {
                checked += 1
                for error in validator.validate(example, against: schema) { Issue.record("/components/schemas/\(name)/example: \(error)") }
            }
        }
        #expect(checked > 30)
    }
}
