import Foundation
import Testing

@testable import NavTestSupport

/// `GET /v1/graphs/{name}/traffic` and `/funnel` (docs/design.md, "Traffic and funnels"): views
/// and edges counted from the feed, funnels in order, every bad parameter with its `param`, and
/// the admin token only.
@Suite struct TrafficRoutesTests {
    static let admin = "traffic-admin-token-0123456789"
    static let backend = "traffic-backend-token-0123456789"

    /// Sessions are created with the backend token, as with one configured they must be.
    static let backendHeader = ["Authorization": "Bearer \(backend)"]

    static func start() throws -> any NavdHarness {
        try startNavd(arguments: ["--admin-token", admin, "--backend-token", backend])
    }

    static func get(_ navd: any NavdHarness, _ target: String, token: String? = admin) throws -> HTTPMessage {
        try navd.request("GET", target, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    }

    /// Three sessions of `news` and one of another graph:
    /// - a: created at top (a view, no edge); list_news; its params changed (not a view);
    ///   show_news;
    /// - b: created at top; list_news; back to top (a view of the top screen again);
    /// - c: created at top; home (its first tab, friend, on top); the profile tab (a view);
    /// - a session of `shop`, which news's traffic does not count.
    static func journeys(_ navd: any NavdHarness) throws {
        let a = try navd.createSession(headers: Self.backendHeader)
        #expect(try navd.navigate(a, "list_news").status == 200)
        let screen = try #require(try navd.view(a)["screens"]?.array?.last?["id"]?.string)
        #expect(try navd.setParams(a, screen: screen, ["category": 2]).status == 200)
        #expect(try navd.navigate(a, "show_news(id=3)").status == 200)
        let b = try navd.createSession(headers: Self.backendHeader)
        #expect(try navd.navigate(b, "list_news").status == 200)
        #expect(try navd.back(b).status == 200)
        let c = try navd.createSession(context: ["user": "u1"], headers: Self.backendHeader)
        #expect(try navd.navigate(c, "home").status == 200)
        #expect(try navd.navigate(c, "..#profile").status == 200)
        let shop: JSON = ["name": "shop", "start": "/top", "scenes": ["top": [:], "list_news": [:]]]
        #expect(try navd.send("PUT", "/v1/graphs/shop", json: shop, token: admin).status == 201)
        let other = try navd.createSession(graph: "shop", headers: Self.backendHeader)
        #expect(try navd.navigate(other, "list_news").status == 200)
    }

    @Test func trafficCountsViewsAndEdgesOfTheGraphOnly() throws {
        let navd = try Self.start()
        defer { _ = try? navd.stop() }
        try Self.journeys(navd)
        let answer = try Self.get(navd, "/v1/graphs/news/traffic")
        #expect(answer.status == 200, "\(answer)")
        let traffic = try answer.json()
        #expect(
            traffic["scenes"] == ["top": 4, "list_news": 2, "show_news": 1, "friend": 1, "profile": 1], "\(answer.text)")
        let edges = traffic["edges"]?.array ?? []
        #expect(
            edges == [
                ["from": "top", "to": "list_news", "count": 2], ["from": "friend", "to": "profile", "count": 1],
                ["from": "list_news", "to": "show_news", "count": 1], ["from": "list_news", "to": "top", "count": 1],
                ["from": "top", "to": "friend", "count": 1]
            ], "\(answer.text)")
        // The defaults are echoed: up to now, from now less the retention (7 days).
        let since = try #require(traffic["since"]?.string.flatMap(Self.time))
        let until = try #require(traffic["until"]?.string.flatMap(Self.time))
        #expect(abs(until - Date().timeIntervalSince1970) < 60)
        #expect(abs(until - since - 7 * 86400) < 1)
        let shop = try Self.get(navd, "/v1/graphs/shop/traffic").json()
        #expect(shop["scenes"] == ["top": 1, "list_news": 1])
        // A range before every record counts none; the times given are echoed.
        let empty = try Self.get(navd, "/v1/graphs/news/traffic?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z").json()
        #expect(empty == ["since": "2020-01-01T00:00:00.000Z", "until": "2020-01-02T00:00:00.000Z", "scenes": [:], "edges": []])
    }

    @Test func aFunnelCountsSessionsThroughTheStepsInOrder() throws {
        let navd = try Self.start()
        defer { _ = try? navd.stop() }
        try Self.journeys(navd)
        func funnel(_ query: String) throws -> [JSON] {
            let answer = try Self.get(navd, "/v1/graphs/news/funnel?" + query)
            #expect(answer.status == 200, "\(answer)")
            return try answer.json()["steps"]?.array ?? []
        }
        #expect(
            try funnel("steps=top,list_news,show_news") == [
                ["scene": "top", "sessions": 3], ["scene": "list_news", "sessions": 2], ["scene": "show_news", "sessions": 1]
            ])
        // In order: back to top after list_news is b alone.
        #expect(try funnel("steps=list_news,top&within=1h") == [["scene": "list_news", "sessions": 2], ["scene": "top", "sessions": 1]])
        #expect(try funnel("steps=friend,profile") == [["scene": "friend", "sessions": 1], ["scene": "profile", "sessions": 1]])
        #expect(try funnel("steps=show_news,list_news") == [["scene": "show_news", "sessions": 1], ["scene": "list_news", "sessions": 0]])
        // A scene twice: top, then top again later (b came back).
        #expect(try funnel("steps=top,top") == [["scene": "top", "sessions": 3], ["scene": "top", "sessions": 1]])
        let answer = try Self.get(navd, "/v1/graphs/news/funnel?steps=top&within=90s").json()
        #expect(answer["within"] == 90)
        // The longest the pattern admits is answered, not refused as an overflow.
        let longest = try Self.get(navd, "/v1/graphs/news/funnel?steps=top&within=999999999d")
        #expect(longest.status == 200)
        #expect(try longest.json()["within"] == .int(999_999_999 * 86_400))
        #expect(try funnel("steps=top&since=2030-01-01T00:00:00Z&until=2030-01-02T00:00:00Z") == [["scene": "top", "sessions": 0]])
    }

    @Test func badParametersAre400WithParam() throws {
        let navd = try Self.start()
        defer { _ = try? navd.stop() }
        for (target, param) in [
            ("/v1/graphs/news/traffic?since=yesterday", "since"), ("/v1/graphs/news/traffic?until=2026-13-01T00:00:00Z", "until"),
            ("/v1/graphs/news/traffic?since=2026-11-27T00:00:00Z&until=2026-11-26T00:00:00Z", "until"),
            ("/v1/graphs/news/funnel", "steps"), ("/v1/graphs/news/funnel?steps=", "steps"),
            ("/v1/graphs/news/funnel?steps=top,,list_news", "steps"), ("/v1/graphs/news/funnel?steps=top,", "steps"),
            ("/v1/graphs/news/funnel?steps=" + Array(repeating: "top", count: 21).joined(separator: ","), "steps"),
            ("/v1/graphs/news/funnel?steps=top&within=soon", "within"), ("/v1/graphs/news/funnel?steps=top&within=0", "within"),
            ("/v1/graphs/news/funnel?steps=top&within=-5m", "within"), ("/v1/graphs/news/funnel?steps=top&within=%2B5m", "within"),
            // Under a second would be echoed as 0 seconds; ten digits pass what the pattern admits.
            ("/v1/graphs/news/funnel?steps=top&within=1ms", "within"), ("/v1/graphs/news/funnel?steps=top&within=999ms", "within"),
            ("/v1/graphs/news/funnel?steps=top&within=1000000000s", "within"), ("/v1/graphs/news/funnel?steps=top&within=05m", "within"),
            ("/v1/graphs/news/funnel?steps=top&since=now", "since"),
            ("/v1/graphs/news/funnel?steps=top&since=2026-11-27T00:00:00Z&until=2026-11-26T00:00:00Z", "until")
        ] {
            let answer = try Self.get(navd, target)
            #expect(answer.status == 400, "\(target): \(answer)")
            #expect(answer.code == "invalid_request", "\(target)")
            #expect(try answer.json()["param"]?.string == param, "\(target)")
        }
    }

    @Test func anUnknownStepIs422AndAnUnknownGraph404() throws {
        let navd = try Self.start()
        defer { _ = try? navd.stop() }
        let unknown = try Self.get(navd, "/v1/graphs/news/funnel?steps=top,checkout")
        #expect(unknown.status == 422)
        #expect(unknown.code == "unknown_scene")
        #expect(try unknown.json()["param"]?.string == "steps")
        // As GET /v1/graphs/{name} answers an unknown graph.
        let graph = try Self.get(navd, "/v1/graphs/nosuch")
        for target in ["/v1/graphs/nosuch/traffic", "/v1/graphs/nosuch/funnel?steps=top"] {
            let answer = try Self.get(navd, target)
            #expect(answer.status == 404 && graph.status == 404, "\(target)")
            #expect(answer.code == graph.code, "\(target)")
        }
    }

    @Test func onlyTheAdminToken() throws {
        let navd = try Self.start()
        defer { _ = try? navd.stop() }
        let session = try navd.createSession(headers: Self.backendHeader)
        let watch = try #require(session.created["watchToken"]?.string)
        for target in ["/v1/graphs/news/traffic", "/v1/graphs/news/funnel?steps=top"] {
            #expect(try Self.get(navd, target, token: nil).status == 401, "\(target)")
            for token in [Self.backend, session.token, watch, "not-a-token-of-this-daemon"] {
                let answer = try Self.get(navd, target, token: token)
                #expect(answer.status == 403 && answer.code == "forbidden", "\(target)")
            }
            #expect(try Self.get(navd, target).status == 200, "\(target)")
        }
    }

    /// `?traffic=T` on the diagram: the admin token only; the views drawn; a bad time is 400.
    @Test func theDiagramDrawsTrafficForTheAdmin() throws {
        let navd = try Self.start()
        defer { _ = try? navd.stop() }
        try Self.journeys(navd)
        let since = "2020-01-01T00:00:00Z"
        let svg = try Self.get(navd, "/v1/graphs/news/diagram?traffic=\(since)")
        #expect(svg.status == 200, "\(svg)")
        #expect(svg.headers["cache-control"] == "no-store")
        #expect(svg.text.contains(#"id="scene-top" data-scene="top" data-views="4">"#), "\(svg.text.prefix(3000))")
        #expect(svg.text.contains(#"data-from="top" data-to="list_news" data-link="news" data-count="2">"#))
        let dot = try Self.get(navd, "/v1/graphs/news/diagram?format=dot&traffic=\(since)")
        #expect(dot.text.contains(#""list_news" -> "top" [label="1", class="edge traffic""#), "\(dot.text)")
        // Without `traffic`, open as ever and without counts.
        let plain = try Self.get(navd, "/v1/graphs/news/diagram", token: nil)
        #expect(plain.status == 200 && !plain.text.contains("data-views"))
        #expect(try Self.get(navd, "/v1/graphs/news/diagram?traffic=\(since)", token: nil).status == 401)
        #expect(try Self.get(navd, "/v1/graphs/news/diagram?traffic=\(since)", token: Self.backend).status == 403)
        let bad = try Self.get(navd, "/v1/graphs/news/diagram?traffic=yesterday")
        #expect(try bad.status == 400 && bad.json()["param"]?.string == "traffic")
    }

    static func time(_ text: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}
