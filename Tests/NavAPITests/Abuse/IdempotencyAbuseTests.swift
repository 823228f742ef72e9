import Foundation
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// A keyed flood against the budgets of answers kept under an `Idempotency-Key` (`docs/design.md`,
/// "Idempotency answers"), on the navd binary with its SQLite store: thousands of keyed changes
/// with a large state, from one session's token and then from many sessions. What is asserted
/// does not depend on the machine's speed: the budget's metrics stay within their limit, the
/// table keeps no more than the budget, refusals are 429/503 with `Retry-After`, ordinary
/// requests are answered, and every acknowledged change is there.
@Suite struct IdempotencyAbuseTests {
    @Test func aKeyedFloodStaysWithinTheBudgetsAndLosesNoAcknowledgedChange() throws {
        let folder = try TemporaryFolder()
        let total = 256 << 10
        let perSession = 64 << 10
        let navd = try DaemonHarness(
            store: "sqlite:\(folder.path)/navd.db",
            arguments: [
                "--max-idempotency-bytes-per-session", "64K", "--max-idempotency-bytes", "256K"
            ])
        @Sendable func budget() throws -> (used: Int, limit: Int) {
            let text = try navd.request("GET", "/metrics").text
            func value(_ metric: String) throws -> Int {
                let prefix = "\(metric){resource=\"idempotency_bytes\"} "
                let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(prefix) })
                return try #require(Int(line.dropFirst(prefix.count)))
            }
            return (try value("navd_budget_used"), try value("navd_budget_limit"))
        }
        let blob = JSON.string(String(repeating: "x", count: 2 * 1024))
        func large() throws -> NavdSession {
            let session = try navd.createSession()
            let patched = try navd.patchState(session, screen: "e1", ["blob": blob])
            try #require(patched.status == 200, "\(patched)")
            return session
        }
        let refusals = Locked([Int: Int]())
        @Sendable func refused(_ answer: HTTPMessage) {
            refusals.withLock { $0[answer.status, default: 0] += 1 }
            #expect(answer.headers["retry-after"].flatMap { Int($0) }.map { (1...60).contains($0) } == true, "\(answer)")
            #expect(answer.code == (answer.status == 429 ? "too_many_requests" : "over_capacity"), "\(answer)")
        }

        // One token: 1,200 keyed changes from 4 clients at once, each answer a view of more than 2 KiB.
        let session = try large()
        let acknowledged = Locked(try navd.view(session)["version"]?.int ?? 0)
        let failures = Locked([String]())
        DispatchQueue.concurrentPerform(iterations: 4) { client in
            do {
                for index in 0..<300 {
                    let path = "^/top/list_news(category=1)/show_news(id=\(index % 50 + 1))"
                    let answer = try navd.navigate(session, path, headers: ["Idempotency-Key": "flood-\(client)-\(index)"])
                    if answer.status == 200 {
                        let version = try answer.json()["version"]?.int ?? 0
                        acknowledged.withLock { $0 = max($0, version) }
                    } else {
                        refused(answer)
                    }
                    if index % 100 == 0 {
                        let (used, limit) = try budget()
                        #expect(limit == total && used <= perSession, "\(used) bytes kept for one session")
                        // Unkeyed changes are still applied.
                        let unkeyed = try navd.navigate(session, path)
                        #expect(unkeyed.status == 200, "\(unkeyed)")
                        let version = try unkeyed.json()["version"]?.int ?? 0
                        acknowledged.withLock { $0 = max($0, version) }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(refusals.withLock { $0[429, default: 0] } > 900, "the session's budget was reached: \(refusals.withLock { $0 })")
        #expect(try navd.view(session)["version"]?.int == acknowledged.withLock { $0 }, "every acknowledged change is there")

        // Many sessions: the daemon's budget fills with answers younger than a minute.
        var sessions: [(NavdSession, Int)] = []
        for _ in 0..<16 {
            let other = try large()
            var version = try navd.view(other)["version"]?.int ?? 0
            for index in 0..<8 {
                let answer = try navd.navigate(
                    other, "^/top/list_news(category=1)/show_news(id=\(index + 1))", headers: ["Idempotency-Key": "many-\(index)"])
                if answer.status == 200 { version = try answer.json()["version"]?.int ?? version } else { refused(answer) }
            }
            #expect(try budget().used <= total)
            sessions.append((other, version))
        }
        #expect(refusals.withLock { $0[503, default: 0] } > 0, "the daemon's budget was reached: \(refusals.withLock { $0 })")
        for (other, version) in sessions {
            #expect(try navd.view(other)["version"]?.int == version)
            #expect(try navd.navigate(other, "login").status == 200)
        }
        #expect(try navd.stop() == 0)

        // Stopped cleanly, every logged change is folded: the table holds no more than the budget.
        let connection = try SQLiteConnection(path: "\(folder.path)/navd.db")
        let statement = try connection.statement(
            "SELECT COALESCE(SUM(length(body) + length(headers) + length(key) + length(fingerprint)), 0) FROM idempotency")
        _ = try statement.step()
        let bytes = statement.int(0)
        statement.reset()
        connection.close()
        #expect(bytes > 0 && bytes <= Int64(total), "\(bytes) bytes of answers kept")
    }
}
