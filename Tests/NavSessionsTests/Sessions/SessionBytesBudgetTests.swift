import Foundation
import Logging
import NavHTTP
import NavJSON
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// All sessions together are bounded by `--max-session-bytes`, the budget `session_bytes`
/// (`docs/design.md`, "Sessions' bytes"): a create or a change that would take the daemon's
/// sessions past it is 503 `over_capacity` with `Retry-After` and changes nothing; a change that
/// adds nothing always goes through; what a deleted or expired session held is given back, and a
/// restart counts what the store holds. Without it, 100,000 sessions (`--max-sessions`) of up to
/// 16 MiB each (the engine's bounds on one session) could take a terabyte. A session's retained
/// events count with it: a thousand results of 16 KiB each take room as a state would.
@Suite struct SessionBytesBudgetTests {
    typealias Kind = IdempotencyBudgetTests.Kind

    static func status(_ response: HTTPResponse) -> String {
        "\(response.status) \(String(decoding: response.body, as: UTF8.self).prefix(300))"
    }

    /// Creates a session of the news graph, then gives its top screen `stateBytes` of state.
    /// - Returns: the session, and the answer to the step that was refused, if one was.
    static func fatSession(_ navd: Clocked, stateBytes: Int) throws -> (session: (id: String, token: String)?, refused: HTTPResponse?) {
        let created = navd.send("POST", "/v1/sessions", body: #"{"graph":"news"}"#)
        guard created.status == 201 else { return (nil, created) }
        let json = try JSONValue(parsing: created.body)
        let session = (id: try #require(json["id"]?.stringValue), token: try #require(json["token"]?.stringValue))
        let patched = patch(navd, session, #"{"blob":"\#(String(repeating: "x", count: stateBytes))"}"#)
        return (session, patched.status == 200 ? nil : patched)
    }

    static func patch(_ navd: Clocked, _ session: (id: String, token: String), _ body: String) -> HTTPResponse {
        navd.send(
            "PATCH", "/v1/sessions/\(session.id)/screens/e1/state", token: session.token, body: body,
            contentType: "application/merge-patch+json")
    }

    @Test(arguments: Kind.allCases)
    func growthPastTheBudgetIsRefusedAndChangesNothing(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try IdempotencyBudgetTests.open(kind, folder)
        defer { store.close() }
        let limit = 256 << 10
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: limit)
        var sessions: [(id: String, token: String)] = []
        var refused: HTTPResponse?
        // Sessions of 20 KB of state each, until one step of them is refused.
        for _ in 0..<64 {
            let (session, refusal) = try Self.fatSession(navd, stateBytes: 20_000)
            if let session { sessions.append(session) }
            if let refusal {
                refused = refusal
                break
            }
        }
        let refusal = try #require(refused, "64 sessions of 20 KB fitted in a budget of 256 KiB")
        #expect(refusal.status == 503 && IdempotencyBudgetTests.code(refusal) == "over_capacity", "\(Self.status(refusal))")
        #expect(IdempotencyBudgetTests.header(refusal, "retry-after") != nil)
        // What is counted is what the store holds, within the limit.
        let (used, stored) = try Self.counted(navd, store)
        #expect(used <= limit)
        #expect(used == stored)
        #expect(try navd.budget("session_bytes") == (used, limit))

        // Full: a change that would grow a session is refused and changes nothing ...
        let first = try #require(sessions.first)
        let version = try navd.version(first)
        let grown = Self.patch(navd, first, #"{"more":"\#(String(repeating: "y", count: 40_000))"}"#)
        #expect(grown.status == 503 && IdempotencyBudgetTests.code(grown) == "over_capacity", "\(Self.status(grown))")
        #expect(try navd.version(first) == version)
        // (It dropped the session's own retained events, trying to make room.)
        #expect(navd.application.sessions.sessionBytes.used <= used)
        try Self.expectExactCount(navd, store)
        // ... one that adds nothing goes through, and gives back what it takes off.
        #expect(navd.navigate(first, "^/top/list_news(category=1)", key: nil).status == 200)
        #expect(Self.patch(navd, first, #"{"blob":null}"#).status == 200)
        #expect(navd.application.sessions.sessionBytes.used < used - 19_000)
        try Self.expectExactCount(navd, store)

        // A deleted session gives back what it held: a new one of the same size fits again.
        let last = try #require(sessions.last)
        #expect(navd.send("DELETE", "/v1/sessions/\(last.id)", token: last.token).status == 204)
        let (again, refusedAgain) = try Self.fatSession(navd, stateBytes: 20_000)
        #expect(again != nil && refusedAgain == nil, "\(refusedAgain.map(Self.status) ?? "")")
        try Self.expectExactCount(navd, store)

        // Expired sessions give back theirs.
        navd.advance(seconds: 25 * 3600)
        #expect(try navd.application.sessions.sweep() > 0)
        #expect(try Self.counted(navd, store) == (0, 0))
    }

    /// Leaves the session's top screen (a list pushed for it) with a result of `bytes` of text.
    static func exit(_ navd: Clocked, _ session: (id: String, token: String), resultBytes bytes: Int) -> HTTPResponse {
        let pushed = navd.navigate(session, "list_news(category=1)", key: nil)
        guard pushed.status == 200 else { return pushed }
        return navd.send(
            "POST", "/v1/sessions/\(session.id)/exit", token: session.token,
            body: #"{"result":"\#(String(repeating: "r", count: bytes))"}"#)
    }

    /// What the store holds (read first: SQLite folds its log to read it), then what the daemon
    /// counts, once it has taken back what the store let go meanwhile.
    static func counted(_ navd: Clocked, _ store: any SessionStore) throws -> (used: Int, stored: Int) {
        let stored = try store.storedSessionBytes()
        navd.application.sessions.releaseEventBytes()
        return (navd.application.sessions.sessionBytes.used, stored)
    }

    /// The daemon counts what the store holds, to the byte.
    static func expectExactCount(_ navd: Clocked, _ store: any SessionStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (used, stored) = try counted(navd, store)
        #expect(used == stored, sourceLocation: sourceLocation)
    }

    /// Results fill the budget as a state would: the events that carry them are retained with
    /// their session. A change that does not fit first drops its own session's retained events
    /// (a replay buffer only newer events trim, which a full budget would otherwise keep from
    /// ever being trimmed), never another session's: a session whose own history cannot make
    /// room is refused while others' results fill the budget, and changes nothing.
    @Test(arguments: Kind.allCases)
    func retainedResultsFillTheBudgetAndASessionMakesRoomWithItsOwn(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try IdempotencyBudgetTests.open(kind, folder)
        defer { store.close() }
        let limit = 256 << 10
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: limit)
        let budget = navd.application.sessions.sessionBytes
        let (full, other) = (try navd.session(stateBytes: 10), try navd.session(stateBytes: 10))
        // One session's results, about 8.7 KB a cycle, until less than 9.5 KB is left.
        var cycles = 0
        while budget.available >= 9_500, cycles < 64 {
            let answer = Self.exit(navd, full, resultBytes: 8_000)
            try #require(answer.status == 200, "\(Self.status(answer))")
            cycles += 1
        }
        #expect(cycles >= 25, "the budget held only \(cycles) results of 8 KB")
        try Self.expectExactCount(navd, store)
        // The other session's own events (about 1.2 KB) cannot make room for 12 KB more.
        let version = try navd.version(other)
        let refused = Self.exit(navd, other, resultBytes: 12_000)
        #expect(refused.status == 503 && IdempotencyBudgetTests.code(refused) == "over_capacity", "\(Self.status(refused))")
        #expect(IdempotencyBudgetTests.header(refused, "retry-after") != nil)
        #expect(try navd.version(other) == version + 1, "only the navigation before the exit was written")
        // The full session's next result drops its own older events, and fits.
        let (before, _) = try Self.counted(navd, store)
        #expect(Self.exit(navd, full, resultBytes: 8_000).status == 200)
        let (after, stored) = try Self.counted(navd, store)
        #expect(after == stored)
        #expect(after < before - 100_000, "\(before) → \(after)")
        // Room for the other session now.
        #expect(Self.exit(navd, other, resultBytes: 12_000).status == 200)
        // Gone with their sessions.
        for session in [full, other] {
            #expect(navd.send("DELETE", "/v1/sessions/\(session.id)", token: session.token).status == 204)
        }
        #expect(try Self.counted(navd, store) == (0, 0))
    }

    /// The store with 20 events retained a session (SQLite folding every 8 changes), so that a
    /// few changes trim them.
    static func openRetainingFew(_ kind: Kind, _ folder: TemporaryFolder) throws -> (any SessionStore, GraphRegistry) {
        let graphs = GraphRegistry()
        switch kind {
        case .memory: return (MemoryStore(retainedEvents: 20), graphs)
        case .sqlite:
            let store = try SQLiteStore(
                path: "\(folder.path)/navd.db", retainedEvents: 20, compactionThreshold: 8, decode: StoreFactory.snapshotDecoder(graphs))
            return (store, graphs)
        }
    }

    /// Retained events count until the store lets them go: trimmed once older than the retained
    /// ones (in memory, in the log's folds and in the table), deleted or expired with their
    /// session. The daemon's count is the store's at every step, to the byte.
    @Test(arguments: Kind.allCases)
    func trimmedEventsAreGivenBack(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try Self.openRetainingFew(kind, folder)
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: 1 << 20)
        let sessions = try (0..<3).map { _ in try navd.session(stateBytes: 10) }
        for round in 0..<40 {
            for session in sessions {
                let answer = Self.exit(navd, session, resultBytes: 4_000)
                #expect(answer.status == 200, "\(Self.status(answer))")
            }
            if round % 7 == 0 { try Self.expectExactCount(navd, store) }
        }
        // 40 results of 4 KB a session were handed over; about two are retained.
        let (used, stored) = try Self.counted(navd, store)
        #expect(used == stored)
        #expect(used < 3 * 30_000, "retained events: \(used) bytes counted")
        let first = try #require(sessions.first)
        #expect(navd.send("DELETE", "/v1/sessions/\(first.id)", token: first.token).status == 204)
        try Self.expectExactCount(navd, store)
        navd.advance(seconds: 25 * 3600)
        #expect(try navd.application.sessions.sweep() == 2)
        #expect(try Self.counted(navd, store) == (0, 0))
    }

    /// On SQLite, a session deleted while its changes wait in a generation sealed for the
    /// compactor (held here by the fold lock) and in the current one: what both logged of its
    /// events is given back once, whenever the compactor gets to them.
    @Test func aSessionDeletedBeforeItsChangesAreFoldedGivesTheirEventsBack() throws {
        let folder = try TemporaryFolder()
        let (opened, graphs) = try Self.openRetainingFew(.sqlite, folder)
        let store = try #require(opened as? SQLiteStore)
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: 1 << 20)
        let (doomed, kept) = (try navd.session(stateBytes: 10), try navd.session(stateBytes: 10))
        try store.folding { _ throws(StoreError) in
            // Twelve changes: the first eight sealed (the compactor waits for this lock), four in the current generation.
            for _ in 0..<3 {
                for session in [doomed, kept] { #expect(Self.exit(navd, session, resultBytes: 2_000).status == 200) }
            }
            #expect(navd.send("DELETE", "/v1/sessions/\(doomed.id)", token: doomed.token).status == 204)
        }
        try Self.expectExactCount(navd, store)
        #expect(navd.send("DELETE", "/v1/sessions/\(kept.id)", token: kept.token).status == 204)
        #expect(try Self.counted(navd, store) == (0, 0))
    }

    /// What a session drops to make room goes from everywhere it is kept but a generation being
    /// folded: on SQLite the table's and the log's current generation, given back to the byte.
    @Test(arguments: Kind.allCases)
    func droppedEventsGoFromTheTableAndTheLog(_ kind: Kind) throws {
        let folder = try TemporaryFolder()
        let (store, graphs) = try Self.openRetainingFew(kind, folder)
        defer { store.close() }
        let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: 1 << 20)
        let session = try navd.session(stateBytes: 10)
        // Folded every 8 changes: the create's events in the table, the last two changes' in the log.
        for _ in 0..<5 { #expect(Self.exit(navd, session, resultBytes: 1_000).status == 200) }
        #expect(try store.events(of: session.id, after: 0, limit: 1000).count >= 20)
        try store.dropRetainedEvents(of: session.id)
        #expect(try store.events(of: session.id, after: 0, limit: 1000).isEmpty)
        try Self.expectExactCount(navd, store)
        #expect(Self.exit(navd, session, resultBytes: 1_000).status == 200)
        #expect(try store.events(of: session.id, after: 0, limit: 1000).count > 5)
        try Self.expectExactCount(navd, store)
    }

    /// What the store holds counts from the start: sessions made before a restart fill the budget
    /// as they did before it.
    @Test func aRestartCountsTheSessionsTheStoreHolds() throws {
        let folder = try TemporaryFolder()
        var held = 0
        do {
            let (store, graphs) = try IdempotencyBudgetTests.open(.sqlite, folder)
            defer { store.close() }
            let navd = try Clocked(store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20)
            for _ in 0..<5 {
                let session = try #require(try Self.fatSession(navd, stateBytes: 10_000).session)
                // Events in several batches, some folded into the table and some only logged.
                for _ in 0..<3 { #expect(Self.exit(navd, session, resultBytes: 1_000).status == 200) }
            }
            held = try Self.counted(navd, store).stored
            #expect(held > 65_000)
        }
        let (store, graphs) = try IdempotencyBudgetTests.open(.sqlite, folder)
        defer { store.close() }
        let navd = try Clocked(
            store: store, graphs: graphs, perSession: 1 << 20, total: 64 << 20, sessionBytes: held + 5_000, addGraph: false)
        try StoreFactory.restoreGraphs(from: store, into: graphs, logger: Logger(label: "test"))
        #expect(navd.application.sessions.sessionBytes.used == held)
        try Self.expectExactCount(navd, store)
        let (_, refusal) = try Self.fatSession(navd, stateBytes: 10_000)
        let refused = try #require(refusal, "a session fitted into what the stored sessions already take")
        #expect(refused.status == 503, "\(Self.status(refused))")
    }
}
