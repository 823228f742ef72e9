import Foundation
import Synchronization
import Testing

@testable import NavTestSupport

/// Framing attacks at scale against the binary (docs/design.md, "HTTP framing"): hundreds of
/// ambiguous heads, each with a request smuggled behind it, from several clients at once and
/// mixed with ordinary keep-alive traffic. Every attack is refused and its connection closed,
/// no smuggled request is read, ordinary requests are answered, every acknowledged change is
/// still there, and the daemon stays healthy.
@Suite(.serialized)
struct FramingAbuseTests {
    /// Clients at once, and the rounds each runs: an attack, then an ordinary request.
    static let clients = 4
    static let rounds = 150

    @Test func hundredsOfFramingAttacksAmidOrdinaryTrafficAreRefusedAndSmuggleNothing() throws {
        let navd = try DaemonHarness()
        let victim = try navd.createSession()
        #expect(try navd.navigate(victim, "login").status == 200)
        let victimPath = try navd.view(victim)["path"]
        let sessions = try (0..<Self.clients).map { _ in try navd.createSession() }
        let attacks = FramingAttack.all
        let smuggled = FramingAttack.smuggled(into: victim)
        let failures = Mutex<[String]>([])
        let refused = Atomic<Int>(0)
        /// Each client's last acknowledged navigation: the path its answer reported.
        let acknowledged = Mutex<[Int: JSON]>([:])

        DispatchQueue.concurrentPerform(iterations: Self.clients) { client in
            func fail(_ what: String) { failures.withLock { $0.append("client \(client): \(what)") } }
            let session = sessions[client]
            // Ordinary traffic goes over one keep-alive connection per client.
            guard let ordinary = try? HTTPConnection(port: navd.port, timeout: 10) else { return fail("no connection") }
            for round in 0..<Self.rounds {
                let attack = attacks[(client * Self.rounds + round) % attacks.count]
                do {
                    let connection = try HTTPConnection(port: navd.port, timeout: 10)
                    try connection.send(attack.bytes(smuggling: smuggled))
                    let answer = try connection.readResponse()
                    let after = try connection.readToEnd()
                    if answer.status == attack.status, answer.code == attack.code, answer.headers["connection"] == "close", after.isEmpty {
                        refused.add(1, ordering: .relaxed)
                    } else {
                        fail("\(attack.name): \(answer), then \(after.count) bytes")
                    }
                } catch {
                    fail("\(attack.name): \(error)")
                }
                do {
                    let path = round % 2 == 0 ? "^/top" : "list_news"
                    let body = Array(#"{"path":"\#(path)"}"#.utf8)
                    let head =
                        "POST \(session.url)/navigate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(session.token)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
                    try ordinary.send(Array(head.utf8) + body)
                    let answer = try ordinary.readResponse()
                    guard answer.status == 200, let view = try? answer.json() else { return fail("navigate \(path): \(answer)") }
                    acknowledged.withLock { $0[client] = view["path"] }
                } catch {
                    return fail("navigate: \(error)")
                }
            }
        }

        let problems = failures.withLock { $0 }
        #expect(problems.isEmpty, "\(problems.count) failures, first: \(problems.prefix(5))")
        #expect(refused.load(ordering: .relaxed) == Self.clients * Self.rounds)
        // No smuggled navigation reached the victim; every acknowledged one is still there.
        #expect(try navd.view(victim)["path"] == victimPath)
        let last = acknowledged.withLock { $0 }
        for (client, session) in sessions.enumerated() {
            #expect(try navd.view(session)["path"] == last[client], "client \(client)")
        }
        // Still healthy, and every refusal counted as an answered request.
        #expect(try navd.request("GET", "/healthz").status == 200)
        #expect(try navd.request("GET", "/readyz").status == 200)
        #expect(try navd.stop() == 0)
    }
}
