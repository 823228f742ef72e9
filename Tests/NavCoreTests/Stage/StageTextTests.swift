import NavJSON
import NavSnapshot
import NavWire
import Testing

@testable import NavCore

/// `SessionState.stageText`: the stage's canonical text, kept from one navigation to the next as
/// the next one's `from`. It must always be the stage's text or nothing.
@Suite struct StageTextTests {
    static let context: [String: JSONValue] = ["user": "u1", "locale": "ja"]

    static func session(_ start: String = "/top/list_news(category=1)/show_news(id=2)!login/help") throws -> (Navigator, SessionState) {
        let navigator = Navigator(graph: try #require(Fixtures.news))
        return (navigator, try navigator.start(at: start, context: context).state)
    }

    @Test func aNavigationLeavesItsTextCached() throws {
        let (navigator, start) = try Self.session()
        #expect(start.stageText == start.path.description)
        var state = start
        for text in [
            "../../show_news(id=9)", "^/list_coupon", "help", "up", "!login/help(q=a%2Cb)", "up(n=2)", "^/home#profile",
            "..#friend/show_friend(name=ken)"
        ] {
            let outcome = try navigator.apply(.navigate(text), to: state)
            #expect(outcome.state.stageText == outcome.state.path.description, "\(text)")
            #expect(outcome.events.first?.from == state.path.description, "\(text)")
            state = outcome.state
        }
    }

    @Test func changingTheScreensForgetsTheText() throws {
        let (_, start) = try Self.session()
        #expect(start.stageText != nil)
        var state = start
        state.screens[state.screens.count - 1].params = ["q": .string("x")]
        #expect(state.stageText == nil)
        // Without the cache, the text is written from the screens.
        #expect(state.pathText == state.path.description)
        #expect(state.pathText.hasSuffix("(q=x)"))
        #expect(start.pathText == start.path.description)
        state = start
        state.screens.removeLast()
        #expect(state.stageText == nil)
        state = start
        state.screens = start.screens
        #expect(state.stageText == nil)
        state = start
        // Other fields keep it.
        state.version += 1
        state.context["x"] = 1
        state.eventCounter += 1
        #expect(state.stageText == start.stageText)
    }

    @Test func theTextIsNotPartOfTheValue() throws {
        let (_, start) = try Self.session()
        var bare = start
        bare.stageText = nil
        #expect(bare == start)
        #expect(bare.hashValue == start.hashValue)
        #expect(bare.snapshotBytes == start.snapshotBytes)
        #expect(Set([bare, start]).count == 1)
    }

    @Test func compactingTheScreensKeepsTheText() throws {
        let (navigator, start) = try Self.session()
        // Appending leaves spare room in the array.
        var state = try navigator.apply(.navigate("help"), to: start).state
        state.screens.reserveCapacity(state.screens.count + 8)
        state.stageText = state.path.description
        let before = state
        #expect(state.screens.capacity > SessionState.roomyCapacity(for: state.screens.count))
        state.compactScreens()
        #expect(state.screens.capacity <= SessionState.roomyCapacity(for: state.screens.count))
        #expect(state == before)
        #expect(state.stageText == before.path.description)
        // Already compact: nothing to do (the same storage, not a copy), nothing lost.
        let storage = state.screens.withUnsafeBufferPointer { $0.baseAddress }
        state.compactScreens()
        #expect(state.screens.withUnsafeBufferPointer { $0.baseAddress } == storage)
        #expect(state.stageText == before.path.description)
    }

    @Test func statePatchesKeepTheTextAndParamsDropIt() throws {
        let (navigator, start) = try Self.session("/top/list_news(category=1)")
        let top = try #require(start.top?.id)
        let patched = try navigator.apply(.patchState(screen: top, patch: ["n": 1]), to: start)
        #expect(patched.changed)
        #expect(patched.state.stageText == start.stageText)
        let changed = try navigator.apply(.setParams(screen: top, params: ["category": 5]), to: start)
        #expect(changed.changed)
        #expect(changed.state.stageText == nil)
        let next = try navigator.apply(.navigate("show_news(id=3)"), to: changed.state)
        #expect(next.events.first?.from == "/top/list_news(category=5)")
        #expect(next.state.stageText == "/top/list_news(category=5)/show_news(id=3)")
    }

    /// Texts longer than the 1,024 bytes written on the stack take the slow paths, cached or not.
    @Test func longTextsGiveTheSameEventsWithAndWithoutTheText() throws {
        let long = String(repeating: "a%2Cb", count: 110)  // 330 bytes as text, each `,` escaped
        let (navigator, start) = try Self.session("/top(q=\(long))/list_coupon(q=\(long))/help(q=\(long))!login")
        #expect(start.path.description.utf8.count > 1024)
        #expect(start.stageText == start.path.description)
        for text in ["../help(q=\(long))", "..", "help", "^/top", "../../..!login", "up(n=3)"] {
            var bare = start
            bare.stageText = nil
            let cached = try navigator.apply(.navigate(text), to: start)
            let uncached = try navigator.apply(.navigate(text), to: bare)
            #expect(cached.events == uncached.events, "\(text)")
            #expect(cached.events.first?.from == start.path.description, "\(text)")
            #expect(cached.events.last?.to == cached.state.path.description, "\(text)")
            #expect(cached.state.stageText == cached.state.path.description, "\(text)")
        }
    }
}
