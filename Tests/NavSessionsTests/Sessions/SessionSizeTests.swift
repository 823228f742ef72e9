import Testing

@testable import NavTestSupport

/// One session cannot be made unboundedly large: the 32-screen depth limit bounds only the
/// stage, and every tab switch saves the stack it leaves, so nested tabs screens (`home` is one in
/// Examples/news.json) visited tab by tab grew one session by up to 31 screens a request (256
/// navigations: 4,606 screens, 456 KB of view; each screen can hold 64 KiB of state, and every
/// change writes the whole session to the store).
@Suite struct SessionSizeTests {
    static func screenCount(_ screens: [JSON]) -> Int {
        screens.reduce(screens.count) { count, screen in
            guard case .object(let saved)? = screen["tabs"]?["saved"] else { return count }
            return count + saved.values.reduce(0) { $0 + screenCount($1.array ?? []) }
        }
    }

    @Test func savedTabStacksCountTowardsALimitOnTheWholeSession() throws {
        let navd = try startNavd()
        let session = try navd.createSession(context: ["user": "u1"])
        var refused: HTTPMessage?
        var before = try navd.view(session)
        // Every way down four levels of `home` tabs, each time with a full stage of new screens.
        for choice in 0..<16 {
            let tabs = (0..<4).map { (choice >> (3 - $0)) & 1 == 0 ? "friend" : "profile" }
            let path = "^/top" + tabs.map { "/home#\($0)" }.joined() + String(repeating: "/login", count: 23)
            let answer = try navd.navigate(session, path)
            if answer.status != 200 {
                refused = answer
                break
            }
            before = try navd.view(session)
        }
        let refusal = try #require(refused, "a session grew to \(Self.screenCount(before["screens"]?.array ?? [])) screens")
        #expect(refusal.status == 422 && refusal.code == "stack_too_deep", "\(refusal)")
        let after = try navd.view(session)
        #expect(after == before, "a refused navigation changes nothing")
        #expect(Self.screenCount(after["screens"]?.array ?? []) <= 256)
        // Leaving the tabs drops their saved stacks: the session shrinks and navigates again.
        #expect(try navd.navigate(session, "^/top/login").status == 200)
        #expect(Self.screenCount(try navd.view(session)["screens"]?.array ?? []) == 2)
        #expect(try navd.stop() == 0)
    }
}
