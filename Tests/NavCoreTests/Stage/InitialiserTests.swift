import Testing

@testable import NavCore

/// The public initialisers of `Screen` and `LifecycleEvent` delegate to the synthesised memberwise
/// ones (which NavCore uses on its hot paths, as they do not copy the value): every argument lands
/// in its own field, whatever order the fields are declared in.
@Suite struct InitialiserTests {
    @Test func lifecycleEventPublicInitialiserSetsEveryField() {
        let event = LifecycleEvent(seq: 7, type: .awake, screen: "e3", scene: "top", transition: 2, from: "/a", to: "/b")
        #expect(event.seq == 7)
        #expect(event.type == .awake)
        #expect(event.screen == "e3")
        #expect(event.scene == "top")
        #expect(event.transition == 2)
        #expect(event.from == "/a")
        #expect(event.to == "/b")
        let bare = LifecycleEvent(seq: 1, type: .transitionEnd, transition: 9)
        #expect(bare.screen == nil && bare.scene == nil && bare.from == nil && bare.to == nil && bare.transition == 9)
        // The memberwise initialiser (transition before type) builds the same value.
        #expect(
            LifecycleEvent(seq: 7, transition: 2, type: .awake, screen: "e3", scene: "top", from: "/a", to: "/b") == event
        )
        #expect(LifecycleEvent(seq: 1, transition: 9, type: .transitionEnd) == bare)
    }

    @Test func screenPublicInitialiserSetsEveryFieldAndNoHint() {
        let tabs = TabsState(selected: "friend")
        let screen = Screen(
            id: "e4", scene: "home", segue: .modal, container: .navigation, params: ["id": .int(3)],
            deps: ["user": "u1"], state: ["step": "one"], tabs: tabs
        )
        #expect(screen.id == "e4")
        #expect(screen.scene == "home")
        #expect(screen.segue == .modal)
        #expect(screen.container == .navigation)
        #expect(screen.params == ["id": .int(3)])
        #expect(screen.deps == ["user": "u1"])
        #expect(screen.state == ["step": "one"])
        #expect(screen.tabs == tabs)
        #expect(screen.sceneHint == -1)
        let plain = Screen(id: "e1", scene: "top", segue: .push, container: .navigation)
        #expect(plain.params.isEmpty && plain.deps.isEmpty && plain.state == .object([:]) && plain.tabs == nil)
        #expect(plain.sceneHint == -1)
        // A hint is not part of the value.
        var hinted = plain
        hinted.sceneHint = 5
        #expect(hinted == plain && hinted.hashValue == plain.hashValue)
    }
}
