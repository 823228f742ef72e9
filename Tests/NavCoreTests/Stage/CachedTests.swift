import NavJSON
import Testing

@testable import NavCore

/// `Cached`: what a value keeps only for speed is not part of it. `Screen` and `SessionState`
/// synthesise `==` and `hash(into:)`, so equality compares every stored field but their caches, a
/// field added later included; these tests list the stored fields, so such a field is noticed.
@Suite struct CachedTests {
    @Test func cachedValuesAreAllEqualAndHashAlike() {
        let one = Cached(wrappedValue: "one")
        let two = Cached(wrappedValue: "two")
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(Cached<String?>(wrappedValue: nil) == Cached(wrappedValue: "text"))
        // Stored in a screen's padding: the wrapper adds nothing to a hint's size.
        #expect(MemoryLayout<Cached<Int32>>.size == MemoryLayout<Int32>.size)
    }

    static let screen = Screen(
        id: "e4", scene: "home", segue: .modal, container: .navigation, params: ["id": .int(3)],
        deps: ["user": "u1"], state: ["step": "one"], tabs: TabsState(selected: "friend")
    )

    /// The stored fields of a value, by the names `Mirror` gives them (a wrapped field's storage is `_name`).
    static func storedFields(of value: Any) -> Set<String> {
        Set(Mirror(reflecting: value).children.compactMap(\.label))
    }

    @Test func screenEqualityComparesEveryStoredFieldButTheHint() {
        let base = Self.screen
        let changes: [(field: String, change: (inout Screen) -> Void)] = [
            ("id", { $0.id = "e5" }),
            ("scene", { $0.scene = "profile" }),
            ("segue", { $0.segue = .push }),
            ("container", { $0.container = .none }),
            ("params", { $0.params = ["id": .int(4)] }),
            ("deps", { $0.deps = ["user": "u2"] }),
            ("state", { $0.state = ["step": "two"] }),
            ("tabs", { $0.tabs?.saved["news"] = [Screen(id: "e9", scene: "news", segue: .tab, container: .none)] })
        ]
        // Every stored field is either compared (and changed below) or the cached hint.
        #expect(Self.storedFields(of: base) == Set(changes.map(\.field)).union(["_sceneHint"]))
        for (field, change) in changes {
            var other = base
            change(&other)
            #expect(other != base, "a screen differing only in \(field) is another screen")
        }
        var hinted = base
        hinted.sceneHint = 7
        #expect(hinted == base)
        #expect(hinted.hashValue == base.hashValue)
        #expect(Set([hinted, base]).count == 1)
    }

    @Test func sessionStateEqualityComparesEveryStoredFieldButTheStageText() {
        var base = SessionState(version: 3, screens: [Self.screen], context: ["user": "u1"], screenCounter: 4, eventCounter: 12)
        base.stageText = "!/home"
        let changes: [(field: String, change: (inout SessionState) -> Void)] = [
            ("version", { $0.version += 1 }),
            ("screens", { $0.screens[0].state = ["step": "two"] }),
            ("context", { $0.context["locale"] = "ja" }),
            ("screenCounter", { $0.screenCounter += 1 }),
            ("eventCounter", { $0.eventCounter += 1 }),
            ("pending", { $0.pending = "/top/settings" })
        ]
        #expect(Self.storedFields(of: base) == Set(changes.map(\.field)).union(["_stageText"]))
        for (field, change) in changes {
            var other = base
            change(&other)
            #expect(other != base, "a state differing only in \(field) is another state")
        }
        // A hint deep in the stage is no part of the state either.
        var other = base
        other.stageText = nil
        other.screens[0].sceneHint = 2
        #expect(other == base)
        #expect(other.hashValue == base.hashValue)
        #expect(Set([other, base]).count == 1)
    }

    /// The pattern itself: a field declared after a `Cached` one in a synthesising type is compared.
    @Test func aFieldBesideACacheIsCompared() {
        struct Probe: Hashable {
            var first: Int
            @Cached var cache: String? = nil
            var added: Int
        }
        #expect(Probe(first: 1, cache: "a", added: 2) == Probe(first: 1, cache: "b", added: 2))
        #expect(Probe(first: 1, cache: "a", added: 2).hashValue == Probe(first: 1, cache: "b", added: 2).hashValue)
        #expect(Probe(first: 1, added: 2) != Probe(first: 1, added: 3))
    }
}
