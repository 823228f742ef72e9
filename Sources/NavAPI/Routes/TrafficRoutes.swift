import NavHTTP
import NavJSON
import NavSessions

/// `GET /v1/graphs/{name}/traffic` and `GET /v1/graphs/{name}/funnel` (admin; docs/design.md,
/// "Traffic and funnels"): what users did with a graph, counted from the feed's views.
struct TrafficRoutes: Sendable {
    let graphs: GraphRegistry
    let sessions: SessionService
    let adminToken: TokenDigest?

    /// The most steps a funnel takes.
    static let maxSteps = 20
    /// A funnel's `within` when none is given.
    static let defaultWithin: Int64 = 30 * 60_000

    func register(in router: inout Routes) {
        router.on("GET", "/v1/graphs/{name}/traffic") { context in try traffic(context) }
        router.on("GET", "/v1/graphs/{name}/funnel") { context in try funnel(context) }
    }

    /// `{"since", "until", "scenes": {scene: views}, "edges": [{"from", "to", "count"}]}`, the
    /// edges by count, most first.
    private func traffic(_ context: RequestContext) throws -> HTTPResponse {
        let range = try Self.range(context, sessions: sessions)
        try Admin.require(context, adminToken: adminToken)
        let name = try graphName(context)
        let traffic = try sessions.traffic(graph: name, in: range)
        return .json(Self.json(traffic, range: range))
    }

    static func json(_ traffic: FeedTraffic, range: Range<Int64>) -> JSONValue {
        let edges = traffic.edges.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
        return [
            "since": .string(Timestamp.text(milliseconds: range.lowerBound)),
            "until": .string(Timestamp.text(milliseconds: range.upperBound)),
            "scenes": .object(traffic.scenes.mapValues { .int($0) }),
            "edges": .array(
                edges.map { edge, count in ["from": .string(edge.from), "to": .string(edge.to), "count": .int(count)] })
        ]
    }

    /// `{"since", "until", "within", "steps": [{"scene", "sessions"}]}` (`within` in seconds).
    private func funnel(_ context: RequestContext) throws -> HTTPResponse {
        let steps = try Self.steps(context)
        let within = try Self.within(context)
        let range = try Self.range(context, sessions: sessions)
        try Admin.require(context, adminToken: adminToken)
        let name = try graphName(context)
        // Scenes are those of the graph's latest version: a funnel is asked of the graph as it is.
        guard let graph = try graphs.latest(name) else { throw APIError(.notFound, "no graph '\(name)'") }
        for scene in steps where graph.graph.scenes[scene] == nil {
            throw APIError(.unknownScene, "step '\(scene)' is no scene of graph '\(name)' (version \(graph.version))", param: "steps")
        }
        let counts = try sessions.funnel(FunnelQuery(graph: name, steps: steps, within: within, range: range))
        return .json([
            "since": .string(Timestamp.text(milliseconds: range.lowerBound)),
            "until": .string(Timestamp.text(milliseconds: range.upperBound)),
            "within": .int(Int(within / 1000)),
            "steps": .array(
                zip(steps, counts).map { scene, count in ["scene": .string(scene), "sessions": .int(count)] })
        ])
    }

    /// The graph the path names, as the other graph routes find it: 404 `not_found` when no
    /// version of it is loaded.
    private func graphName(_ context: RequestContext) throws -> String {
        let name = context.parameter("name")
        guard try graphs.latest(name) != nil else { throw APIError(.notFound, "no graph '\(name)'") }
        return name
    }

    /// `since` and `until` (RFC 3339), with their defaults (``SessionService/feedRange(since:until:)``).
    /// - Throws: 400 for a malformed time or an `until` before `since`; 404 when the feed is off.
    static func range(_ context: RequestContext, sessions: SessionService) throws(APIError) -> Range<Int64> {
        func time(_ name: String) throws(APIError) -> Int64? {
            guard let text = context.request.query[name] else { return nil }
            guard let time = Timestamp.milliseconds(parsing: text) else {
                throw APIError(
                    .invalidRequest, "query parameter '\(name)' must be an RFC 3339 time, such as 2026-11-27T16:00:00Z", param: name)
            }
            return time
        }
        let since = try time("since")
        let until = try time("until")
        if let since, let until, until < since {
            throw APIError(.invalidRequest, "query parameter 'until' must not be before 'since'", param: "until")
        }
        guard let range = sessions.feedRange(since: since, until: until) else {
            throw APIError(.notFound, "the feed is off (--feed-retention 0)")
        }
        return range
    }

    /// `steps`: scene names separated by commas, 1 to ``maxSteps``.
    static func steps(_ context: RequestContext) throws(APIError) -> [String] {
        guard let text = context.request.query["steps"] else {
            throw APIError(.invalidRequest, "query parameter 'steps' is required: scene names separated by commas", param: "steps")
        }
        let steps = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !steps.contains(where: \.isEmpty) else {
            throw APIError(.invalidRequest, "query parameter 'steps' must be scene names separated by commas, none empty", param: "steps")
        }
        guard steps.count <= maxSteps else {
            throw APIError(.invalidRequest, "query parameter 'steps' names \(steps.count) steps (at most \(maxSteps))", param: "steps")
        }
        return steps
    }

    /// `within`: a whole number of seconds, minutes, hours or days (`90s`, `30m`, `24h`, `7d`, or
    /// plain seconds), at least a second; 30 minutes when absent. Exactly openapi.yaml's pattern:
    /// 1 to 9 digits, no leading zero, so every duration it admits is answered (999,999,999 days
    /// fit in milliseconds) and echoed in seconds exactly, never a fraction rounded to 0.
    static func within(_ context: RequestContext) throws(APIError) -> Int64 {
        guard let text = context.request.query["within"] else { return defaultWithin }
        var digits = Substring(text).utf8[...]
        var unit: Int64 = 1000
        if let last = digits.last, let scale = withinUnits[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard (1...9).contains(digits.count), digits.first != UInt8(ascii: "0"),
            let amount = DecimalDigits.parse(digits, sign: .none)
        else {
            throw APIError(
                .invalidRequest,
                "query parameter 'within' must be a whole number of seconds, minutes, hours or days, such as 90s, "
                    + "30m, 24h or 7d", param: "within")
        }
        return Int64(amount) * unit
    }

    /// A funnel's units, in milliseconds.
    private static let withinUnits: [UInt8: Int64] = [
        UInt8(ascii: "s"): 1000, UInt8(ascii: "m"): 60_000, UInt8(ascii: "h"): 3_600_000, UInt8(ascii: "d"): 86_400_000
    ]
}
