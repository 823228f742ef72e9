import Foundation
import Testing

@testable import NavCore
@testable import NavSessions
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// PostgreSQL stops under a running navd while clients navigate: they get 503
/// `store_unavailable` with `Retry-After` (never a 500, never a hang), `/readyz` says so, and
/// when PostgreSQL comes back navd serves again by itself with every acknowledged change kept.
///
/// On the binary: "never a hang" is about the HTTP server's pool threads, which a store call that
/// blocks would hold up, and clients' connections, which must neither fail nor time out.
@Suite(.serialized) struct PostgresOutageTests {
    static let paths = [NewsPaths.pathA, NewsPaths.pathB]
    static let canonical = [NewsPaths.canonicalA, NewsPaths.canonicalB]

    /// What the clients saw: acknowledgements, and every answer that was not a 200.
    final class Outcomes: @unchecked Sendable {
        struct Refusal: Sendable {
            var status: Int
            var code: String?
            var retryAfter: String?
        }

        let acks = Locked<[TransitionDriver.Acknowledgement]>([])
        let refusals = Locked<[Refusal]>([])
        /// Requests that got no answer at all (the connection failed or timed out).
        let unanswered = Locked<Int>(0)
        let slowest = Locked<Double>(0)
    }

    /// How navd runs and how many clients drive it: the default (two request threads, so at most
    /// two changes wait together), and group commit (docs/design.md, "PostgreSQL") with many more request threads than
    /// connections, so that the outage cuts off groups of changes in flight.
    struct Load: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var clients: Int
        var sessions: Int
        var testDescription: String { arguments.isEmpty ? "defaults" : arguments.joined(separator: " ") }
    }

    @Test(
        .needsPostgres,
        arguments: [
            Load(arguments: [], clients: 4, sessions: 4),
            Load(arguments: ["--threads", "16", "--pg-connections", "2"], clients: 16, sessions: 8)
        ])
    func clientsGet503WhilePostgresIsDownAndNavdRecoversByItself(_ load: Load) throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let daemon = try DaemonHarness(store: cluster.url, arguments: load.arguments)
        let sessions = try (0..<load.sessions).map { _ in try daemon.createSession() }
        #expect(try daemon.request("GET", "/readyz").status == 200)

        let outcomes = Outcomes()
        let running = Locked(true)
        let group = DispatchGroup()
        for client in 0..<load.clients {
            group.enter()
            Thread {
                var step = 0
                while running.withLock({ $0 }) {
                    let session = sessions[(client + step) % sessions.count]
                    let path = Self.paths[(step / sessions.count + client) % Self.paths.count]
                    step += 1
                    let started = Date()
                    let answer = try? daemon.send("POST", session.url + "/navigate", json: ["path": .string(path)], token: session.token)
                    let seconds = Date().timeIntervalSince(started)
                    outcomes.slowest.withLock { $0 = max($0, seconds) }
                    guard let answer else {
                        outcomes.unanswered.withLock { $0 += 1 }
                        continue
                    }
                    if answer.status == 200, let body = try? answer.json(), let version = body["version"]?.int,
                        let reached = body["path"]?.string
                    {
                        outcomes.acks.withLock { $0.append(.init(session: session.id, version: version, path: reached)) }
                    } else {
                        outcomes.refusals.withLock {
                            $0.append(.init(status: answer.status, code: answer.code, retryAfter: answer.headers["retry-after"]))
                        }
                        usleep(20_000)
                    }
                }
                group.leave()
            }.start()
        }
        // Enough acknowledged before the outage to tell (a loaded CI machine may take a while).
        let acksDeadline = Date().addingTimeInterval(30)
        while outcomes.acks.withLock({ $0.count }) <= 10, Date() < acksDeadline { usleep(10_000) }
        let acksBeforeOutage = outcomes.acks.withLock { $0.count }
        try cluster.pause()
        // While PostgreSQL is down: refusals pile up, and /readyz reports the store within its cache time.
        var readiness: HTTPMessage?
        let readyDeadline = Date().addingTimeInterval(3)
        repeat {
            usleep(100_000)
            readiness = try daemon.request("GET", "/readyz")
        } while readiness?.status != 503 && Date() < readyDeadline
        #expect(readiness?.status == 503)
        #expect(readiness?.headers["retry-after"] != nil)
        #expect((try readiness?.json())?["status"]?.string == "store_unavailable")
        let refusalsDeadline = Date().addingTimeInterval(10)
        while outcomes.refusals.withLock({ $0.count }) == 0, Date() < refusalsDeadline { usleep(10_000) }
        let refusedDuringOutage = outcomes.refusals.withLock { $0.count }
        let create = try daemon.send("POST", "/v1/sessions", json: [:])
        #expect(create.status == 503)
        #expect(create.code == "store_unavailable")

        try cluster.resume()
        // navd notices by itself: ready again, and navigations succeed, without a restart.
        let recoverDeadline = Date().addingTimeInterval(5)
        repeat {
            usleep(100_000)
            readiness = try daemon.request("GET", "/readyz")
        } while readiness?.status != 200 && Date() < recoverDeadline
        #expect(readiness?.status == 200)
        let acksAtRecovery = outcomes.acks.withLock { $0.count }
        let acksAfterDeadline = Date().addingTimeInterval(10)
        while outcomes.acks.withLock({ $0.count }) <= acksAtRecovery, Date() < acksAfterDeadline { usleep(10_000) }
        running.withLock { $0 = false }
        group.wait()

        let acks = outcomes.acks.withLock { $0 }
        let refusals = outcomes.refusals.withLock { $0 }
        #expect(acksBeforeOutage > 10)
        #expect(refusedDuringOutage > 0, "no request was refused while PostgreSQL was down")
        #expect(acks.count > acksAtRecovery, "no navigation succeeded after PostgreSQL came back")
        for refusal in refusals {
            #expect(refusal.status == 503 && refusal.code == "store_unavailable", "\(refusal.status) \(refusal.code ?? "-")")
            #expect(refusal.retryAfter == "1")
        }
        #expect(outcomes.unanswered.withLock { $0 } == 0)
        #expect(outcomes.slowest.withLock { $0 } < 5, "a request waited \(outcomes.slowest.withLock { $0 }) s")

        // Every acknowledged change is there, versions have no gap and no stage is half-applied.
        var last: [String: TransitionDriver.Acknowledgement] = [:]
        for ack in acks where (last[ack.session]?.version ?? 0) < ack.version { last[ack.session] = ack }
        for session in sessions {
            let view = try daemon.view(session)
            let version = try #require(view["version"]?.int)
            #expect(Self.canonical.contains(view["path"]?.string ?? ""), "half-applied stage \(view["path"] ?? .null)")
            if let ack = last[session.id] {
                // A write cut off by the outage may have committed without its answer.
                #expect(version >= ack.version)
                if version == ack.version { #expect(view["path"]?.string == ack.path) }
            }
            var events: [JSON] = []
            while true {
                let page = try daemon.events(session, after: events.last?["seq"]?.int ?? 0, limit: 1000).json()["events"]?.array ?? []
                if page.isEmpty { break }
                events += page
            }
            let seqs = events.compactMap { $0["seq"]?.int }
            #expect(seqs == Array((seqs.first ?? 1)..<((seqs.first ?? 1) + seqs.count)), "gaps in \(seqs)")
            let ends = events.filter { $0["type"]?.string == "transitionEnd" }
            #expect(
                ends.compactMap { $0["transition"]?.int } == Array(((ends.first?["transition"]?.int) ?? 1)...version),
                "every version once, no gap")
            let reached = Dictionary(ends.compactMap { end in end["transition"]?.int.map { ($0, end["to"]?.string) } }) { first, _ in first
            }
            let firstRetained = ends.first?["transition"]?.int ?? 1
            for ack in acks where ack.session == session.id && ack.version >= firstRetained {
                #expect(reached[ack.version] == ack.path, "acknowledged version \(ack.version) of \(session.id)")
            }
        }
        #expect(try daemon.stop() == 0)
    }
}
