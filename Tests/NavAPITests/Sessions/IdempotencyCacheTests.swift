import Foundation
import NavHTTP
import NavJSON
import NavStoreSQLite
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavSessions
@testable import NavTestSupport

/// Where the answers kept under an `Idempotency-Key` are held in memory (`docs/design.md`,
/// "Idempotency answers"): on the memory store, in the daemon's own memory of answers, which holds
/// exactly what the ledger counts and forgets what it forgets; on a store that keeps answers, in
/// the store only, with no second copy in the daemon.
@Suite struct IdempotencyCacheTests {
    @Test func onTheMemoryStoreTheDaemonHoldsWhatTheLedgerCountsAndNoMore() throws {
        let navd = try Clocked(
            store: MemoryStore(), graphs: GraphRegistry(), perSession: 1 << 20, total: 160 * 1024)
        let held = try #require(navd.application.answersInMemory)
        let sessions = [try navd.session(), try navd.session()]
        // Past a minute between rounds, so older answers may be forgotten to make room.
        for round in 0..<12 {
            for (index, session) in sessions.enumerated() {
                let response = navd.navigate(session, round % 2 == 0 ? "list_news" : "^/top", key: "k\(round)-\(index)")
                #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            }
            navd.advance(seconds: 61)
            #expect(held.bytes <= navd.answers.bytes, "round \(round): \(held.bytes) held, \(navd.answers.bytes) counted")
            #expect(held.bytes <= 160 * 1024)
            #expect(held.keys.allSatisfy { navd.answers.holds($0) })
        }
        #expect(try navd.evicted() > 0, "the budget made room: the case this is about")
        // The newest answer still replays from memory.
        let replay = navd.navigate(sessions[1], "^/top", key: "k11-1")
        #expect(replay.headers.contains { $0.0 == "Idempotent-Replayed" })
    }

    @Test func aStoreThatKeepsAnswersIsTheOnlyPlaceTheyAreHeld() throws {
        let folder = try TemporaryFolder()
        let graphs = GraphRegistry()
        let store = try SQLiteStore(path: folder.path + "/navd.db", decode: StoreFactory.snapshotDecoder(graphs))
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20)
        #expect(navd.application.answersInMemory == nil)
        let session = try navd.session()
        let first = navd.navigate(session, "list_news", key: "once")
        #expect(first.status == 200)
        let again = navd.navigate(session, "list_news", key: "once")
        #expect(again.headers.contains { $0.0 == "Idempotent-Replayed" })
        #expect(again.body == first.body)
        #expect(try navd.version(session) == 3)
    }
}
