import Foundation
import Testing

@testable import NavTestSupport

/// Who may create a session and how large its context may be (docs/design.md, "Auth and tokens", "Limits and bad input"), and parameter
/// keys that the path grammar could not print (defect 11), against the application `navd serve`
/// builds from these arguments (in process).
@Suite struct SessionCreationTests {
    static let adminToken = "admin-0123456789abcdef"
    static let backendToken = "backend-0123456789abcdef"

    static func context(bytes: Int) -> JSON {
        // {"blob":"xxx…"}: 11 bytes of JSON around the string.
        ["blob": .string(String(repeating: "x", count: bytes - 11))]
    }

    @Test func withABackendTokenOnlyItOrTheAdminTokenCreatesSessions() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.adminToken, "--backend-token", Self.backendToken])
        let body: JSON = ["context": ["user": "u1"]]

        let missing = try navd.send("POST", "/v1/sessions", json: body)
        #expect(missing.status == 401 && missing.code == "unauthorized", "\(missing)")
        #expect(missing.headers["www-authenticate"] == "Bearer")

        let bySession = try navd.createSession(headers: ["Authorization": "Bearer \(Self.backendToken)"])
        for wrong in ["backend-0123456789abcdeX", "x", bySession.token] {
            let answer = try navd.send("POST", "/v1/sessions", json: body, token: wrong)
            #expect(answer.status == 401 && answer.code == "unauthorized", "\(wrong): \(answer)")
            #expect(answer.headers["www-authenticate"] == #"Bearer error="invalid_token""#, "\(wrong)")
        }
        // Refused attempts created nothing; the two tokens do.
        let byAdmin = try navd.createSession(headers: ["Authorization": "Bearer \(Self.adminToken)"])
        let listed = try navd.request("GET", "/v1/sessions", headers: ["Authorization": "Bearer \(Self.adminToken)"]).json()
        let ids = Set((listed["sessions"]?.array ?? []).compactMap { $0["id"]?.string })
        #expect(ids == [bySession.id, byAdmin.id])
        // The session's own token still drives it; the backend token opens no session.
        #expect(try navd.navigate(bySession, "list_news").status == 200)
        #expect(try navd.send("GET", bySession.url, token: Self.backendToken).status != 200)
        #expect(try navd.stop() == 0)
    }

    /// A create retried with its `Idempotency-Key` replays the first answer, token included: so
    /// the replay needs the backend token as the create did.
    @Test func aRetriedCreateNeedsTheBackendTokenToo() throws {
        let navd = try startNavd(arguments: ["--backend-token", Self.backendToken])
        let body: JSON = ["context": ["user": "u1"]]
        let key = "create-\(UUID().uuidString)"
        let backend = ["Idempotency-Key": key, "Authorization": "Bearer \(Self.backendToken)"]
        let first = try navd.send("POST", "/v1/sessions", json: body, headers: backend)
        #expect(first.status == 201, "\(first)")
        for headers in [["Idempotency-Key": key], ["Idempotency-Key": key, "Authorization": "Bearer backend-0123456789abcdeX"]] {
            let replay = try navd.send("POST", "/v1/sessions", json: body, headers: headers)
            #expect(replay.status == 401 && replay.code == "unauthorized", "\(headers): \(replay)")
            #expect(!replay.text.contains(try #require(first.json()["token"]?.string)))
        }
        let again = try navd.send("POST", "/v1/sessions", json: body, headers: backend)
        #expect(again.status == 201 && again.headers["idempotent-replayed"] == "true")
        #expect(try again.json() == (try first.json()))
        #expect(try navd.stop() == 0)
    }

    @Test func withoutABackendTokenAnyoneCreatesSessions() throws {
        let navd = try startNavd()
        let session = try navd.createSession(context: ["user": "u1"])
        #expect(session.created["context"] == ["user": "u1"])
        #expect(try navd.stop() == 0)
    }

    @Test func aContextOverTheLimitIsRefusedAndCreatesNothing() throws {
        let navd = try startNavd(arguments: ["--admin-token", Self.adminToken])
        // The default limit is 4096 bytes of JSON.
        #expect(try navd.createSession(context: Self.context(bytes: 4096)).created["context"] == Self.context(bytes: 4096))
        for bytes in [4097, 60_000] {
            let answer = try navd.send("POST", "/v1/sessions", json: ["context": Self.context(bytes: bytes)])
            #expect(answer.status == 400 && answer.code == "invalid_request", "\(bytes): \(answer)")
            #expect(try answer.json()["param"] == "context", "\(bytes)")
        }
        let listed = try navd.request("GET", "/v1/sessions", headers: ["Authorization": "Bearer \(Self.adminToken)"]).json()
        #expect(listed["sessions"]?.array?.count == 1)
        #expect(try navd.stop() == 0)

        let small = try startNavd(arguments: ["--max-context", "100"])
        #expect(try small.createSession(context: Self.context(bytes: 100)).created["context"] == Self.context(bytes: 100))
        let over = try small.send("POST", "/v1/sessions", json: ["context": Self.context(bytes: 101)])
        #expect(over.status == 400 && over.code == "invalid_request", "\(over)")
        #expect(try over.json()["param"] == "context")
        #expect(try small.stop() == 0)
    }

    @Test func theSettingsAreCheckedAndDocumented() throws {
        let short = try CLIProcess.navd(["serve", "--store", "memory", "--listen", "127.0.0.1:0", "--backend-token", "short"])
        #expect(short.status != 0)
        #expect(short.errors.contains("backend token must be at least 16 characters"), "\(short.errors)")
        let help = try CLIProcess.navd(["serve", "--help"])
        for text in ["--backend-token", "NAVD_BACKEND_TOKEN", "--max-context", "NAVD_MAX_CONTEXT"] {
            #expect(help.output.contains(text), "\(text)")
        }
        let readme = try String(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        #expect(readme.contains("`--backend-token T` | `NAVD_BACKEND_TOKEN`"))
        #expect(readme.contains("`--max-context BYTES` | `NAVD_MAX_CONTEXT`"))
    }

    @Test func paramsKeysThatAreNotPathNamesAreRefusedAndChangeNothing() throws {
        let navd = try startNavd()
        let session = try navd.createSession()
        let before = try navd.view(session)
        let top = try #require(before["screens"]?.array?.last?["id"]?.string)
        let answer = try navd.setParams(session, screen: top, ["a)/evil(x": "1", "k=v,z": "2"])
        #expect(answer.status == 422 && answer.code == "invalid_params", "\(answer)")
        #expect(try answer.json()["param"] == "a)/evil(x")
        for key in [";d", "", "a b", "é"] {
            let refused = try navd.setParams(session, screen: top, [key: "5"])
            #expect(refused.status == 422, "\(key): \(refused)")
            #expect(try refused.json()["param"] == .string(key), "\(key)")
        }
        #expect(try navd.view(session) == before)
        // Values with every delimiter are fine, and the path they make reads back.
        let fine = try navd.setParams(session, screen: top, ["k": ",)(%=/!#^ é"])
        #expect(fine.status == 200, "\(fine)")
        let path = try #require(fine.json()["path"]?.string)
        #expect(try navd.navigate(session, "^" + path).json()["version"] == fine.json()["version"])
        #expect(try navd.stop() == 0)
    }
}
