import Testing

@testable import NavSessions
@testable import NavTestSupport

/// The ledger of kept answers on its own: what it counts after removals, expiry and forgotten
/// sessions matches what it holds, and the budget it shows at `/metrics` with it.
@Suite struct KeptAnswerLedgerTests {
    @Test func expiryAndForgottenSessionsLeaveExactlyWhatIsStillKept() throws {
        let budget = Budget(resource: "idempotency_bytes", limit: 1 << 30)
        let ledger = KeptAnswerLedger(perSession: 1 << 30, budget: budget)
        var kept: [String: (session: String, cost: Int, at: Int64)] = [:]
        // 2,000 answers over 10 sessions, one a second; every tenth a create's (kept while its
        // session lives); many removed again, so the order holds stale items to skip and drop.
        for index in 0..<2000 {
            let session = "s\(index % 10)"
            let key = index % 10 == 0 ? "create \(index)" : "\(session) \(index)"
            let at = Int64(index) * 1000
            _ = try ledger.admit(.init(key: key, session: session, cost: 100 + index % 7, createdAt: at), now: at)
            kept[key] = (session, 100 + index % 7, at)
            if index % 3 == 0 {
                ledger.remove(key)
                kept[key] = nil
            }
        }
        func check(_ sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(ledger.bytes == kept.values.reduce(0) { $0 + $1.cost }, sourceLocation: sourceLocation)
            #expect(budget.used == ledger.bytes, sourceLocation: sourceLocation)
            for id in 0..<10 {
                let session = "s\(id)"
                #expect(
                    ledger.bytes(of: session) == kept.values.filter { $0.session == session }.reduce(0) { $0 + $1.cost },
                    sourceLocation: sourceLocation)
            }
            for key in kept.keys { #expect(ledger.holds(key), sourceLocation: sourceLocation) }
        }
        check()
        // The sweep: answers to changes older than the cutoff go; creates' stay.
        ledger.expire(before: 1_500_000)
        kept = kept.filter { $0.value.at >= 1_500_000 || $0.key.hasPrefix("create ") }
        check()
        // Deleted sessions: all their answers go.
        ledger.forget(sessions: ["s0", "s3"])
        kept = kept.filter { $0.value.session != "s0" && $0.value.session != "s3" }
        check()
        #expect(ledger.evicted == 0)
    }

    @Test func roomIsMadeFromTheOldestAndNeverFromAnAnswerYoungerThanAMinute() throws {
        let budget = Budget(resource: "idempotency_bytes", limit: 1000)
        let ledger = KeptAnswerLedger(perSession: 400, budget: budget)
        func refusal(_ entry: KeptAnswerLedger.Entry, now: Int64) -> KeptAnswerLedger.Refusal? {
            do {
                _ = try ledger.admit(entry, now: now)
                return nil
            } catch {
                return error
            }
        }
        // The session's own oldest first.
        #expect(try ledger.admit(.init(key: "a 1", session: "a", cost: 200, createdAt: 0), now: 0).isEmpty)
        #expect(try ledger.admit(.init(key: "a 2", session: "a", cost: 200, createdAt: 30_000), now: 30_000).isEmpty)
        #expect(try ledger.admit(.init(key: "a 3", session: "a", cost: 200, createdAt: 60_000), now: 60_000) == ["a 1"])
        // The oldest left is too young to forget: refused, nothing changed, and when it is old enough.
        guard case .session(let wait) = refusal(.init(key: "a 4", session: "a", cost: 200, createdAt: 60_001), now: 60_001) else {
            Issue.record("expected the session's refusal")
            return
        }
        #expect(wait == 29_999)
        #expect(ledger.bytes(of: "a") == 400 && ledger.holds("a 2") && ledger.holds("a 3") && !ledger.holds("a 4"))
        // The daemon's budget: anyone's oldest first.
        for index in 0..<3 {
            _ = try ledger.admit(.init(key: "b \(index)", session: "b", cost: 100, createdAt: 120_000), now: 120_000)
        }
        _ = try ledger.admit(.init(key: "c 1", session: "c", cost: 300, createdAt: 120_000), now: 120_000)
        #expect(ledger.bytes == 1000)
        #expect(try ledger.admit(.init(key: "c 2", session: "c", cost: 100, createdAt: 120_000), now: 120_000) == ["a 2"])
        #expect(try ledger.admit(.init(key: "d 1", session: "d", cost: 200, createdAt: 150_000), now: 150_000) == ["a 3"])
        guard case .daemon(let later) = refusal(.init(key: "d 2", session: "d", cost: 200, createdAt: 150_000), now: 150_000) else {
            Issue.record("expected the daemon's refusal")
            return
        }
        #expect(later == 30_000)
        #expect(ledger.bytes == 900 && budget.used == ledger.bytes && !ledger.holds("d 2"))
        #expect(ledger.evicted == 3)
    }
}
