import NavCore
import NavJSON
import NavSessions
import Synchronization
import Testing

/// Journeys whose traffic and funnels are known, written through a session service on any store,
/// for the stores' tests that traffic and funnels agree (docs/design.md, "Traffic and funnels").
enum TrafficJourneys {
    /// When the journeys start (ms since the epoch); they end within ``span``.
    static let start: Int64 = 1_000_000_000
    static let span: Int64 = 4 * 3_600_000

    /// A service on `store` with the news graph, on `clock`.
    static func service(_ store: any SessionStore, clock: Locked<Int64>) throws -> SessionService {
        try TestFixtures.service(store: store, now: { clock.withLock { $0 } })
    }

    /// Writes the journeys through `sessions` on `store`, moving `clock` on between changes:
    /// - a: created at top (a view, no edge); list_news; its params changed (not a view); show_news;
    /// - b: created at top; list_news; back to top (a view of the top screen again);
    /// - c: created at top; home (its first tab, friend, on top); the profile tab;
    /// - d: created at top; two hours later list_news; then deleted (an end: no view).
    /// `between` runs after each session's journey (a test compacts or reopens there).
    static func write(_ sessions: SessionService, _ store: any SessionStore, clock: Locked<Int64>, between: () throws -> Void = {}) throws {
        clock.withLock { $0 = start }
        func tick(_ milliseconds: Int64 = 1000) { clock.withLock { $0 += milliseconds } }
        var tokens: [String: String] = [:]
        func create(_ context: [String: JSONValue] = [:]) throws -> String {
            tick()
            let created = try sessions.create(graph: nil, start: nil, context: context)
            tokens[created.session.id] = created.token
            return created.session.id
        }
        func apply(_ id: String, _ intent: Intent) throws {
            tick()
            let loaded = try #require(try store.load(id))
            _ = try sessions.mutate(id, change: .intent(intent), ifMatch: nil, loaded: loaded)
        }
        let a = try create()
        try apply(a, .navigate("list_news"))
        let screen = try #require(try store.load(a)?.state.top?.id)
        try apply(a, .setParams(screen: screen, params: ["category": .int(2)]))
        try apply(a, .navigate("show_news(id=3)"))
        try between()
        let b = try create()
        try apply(b, .navigate("list_news"))
        try apply(b, .back(1))
        try between()
        let c = try create(["user": "u1"])
        try apply(c, .navigate("home"))
        try apply(c, .navigate("..#profile"))
        try between()
        let d = try create()
        tick(2 * 3_600_000)
        try apply(d, .navigate("list_news"))
        tick()
        try sessions.delete(d, credentials: Credentials(bearer: tokens[d].map(Token.digest)), ifMatch: nil)
        try between()
    }

    /// The traffic of all of them.
    static let traffic = FeedTraffic(
        scenes: ["top": 5, "list_news": 3, "show_news": 1, "friend": 1, "profile": 1],
        edges: [
            .init(from: "top", to: "list_news"): 3, .init(from: "list_news", to: "show_news"): 1, .init(from: "list_news", to: "top"): 1,
            .init(from: "top", to: "friend"): 1, .init(from: "friend", to: "profile"): 1
        ])

    /// Queries and what they answer.
    static let funnels: [(FunnelQuery, [Int])] = [
        (query(["top", "list_news", "show_news"]), [4, 2, 1]),
        (query(["top", "list_news"], within: 3 * 3_600_000), [4, 3]),
        (query(["list_news", "top"]), [3, 1]),
        (query(["top", "top"]), [4, 1]),
        (query(["friend", "profile"]), [1, 1]),
        (query(["show_news", "list_news"]), [1, 0]),
        (query(["top", "list_news"], range: start + 5000..<start + span), [3, 1])
    ]

    static func query(_ steps: [String], within: Int64 = 30 * 60_000, range: Range<Int64> = start..<start + span) -> FunnelQuery {
        FunnelQuery(graph: "news", steps: steps, within: within, range: range)
    }

    /// Holds `store`'s traffic and funnels to the known answers, and a sub-range to `reference`'s.
    static func check(_ store: any SessionStore, against reference: any SessionStore, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        #expect(try store.traffic(graph: "news", in: start..<start + span) == traffic, sourceLocation: sourceLocation)
        #expect(try store.traffic(graph: "other", in: start..<start + span) == FeedTraffic(), sourceLocation: sourceLocation)
        #expect(try store.traffic(graph: "news", in: 0..<start) == FeedTraffic(), sourceLocation: sourceLocation)
        for range in [start + 3000..<start + 9000, start + 9000..<start + span] {
            #expect(
                try store.traffic(graph: "news", in: range) == reference.traffic(graph: "news", in: range), "\(range)",
                sourceLocation: sourceLocation)
        }
        for (query, counts) in funnels {
            #expect(try store.funnel(query) == counts, "\(query.steps)", sourceLocation: sourceLocation)
            #expect(try reference.funnel(query) == counts, "\(query.steps)", sourceLocation: sourceLocation)
        }
    }
}
