/// What the top screen of a stage can do now (DESIGN §8 Actions), so a client renders its buttons
/// without reading the graph.
public struct Actions: Sendable, Hashable {
    /// A link that may be applied now, with the names of the parameters its path needs.
    public struct Link: Sendable, Hashable {
        public var name: String
        /// The link's `{placeholder}` names in template order.
        public var params: [String]

        public init(name: String, params: [String]) {
            self.name = name
            self.params = params
        }
    }

    /// The top scene's links (by name), then the global links (by name) that no scene link hides.
    public var links: [Link]
    /// Whether `exit` would apply now.
    public var exit: Bool
    /// The largest count that `back` would apply now; 0 when none would.
    public var back: Int

    public init(links: [Link], exit: Bool, back: Int) {
        self.links = links
        self.exit = exit
        self.back = back
    }
}

extension Actions {
    /// A scene's links by name, then the global links by name that none of them hides.
    static func links(own: [String: NavCore.Link], global: [String: NavCore.Link]) -> [Link] {
        var result: [Link] = []
        result.reserveCapacity(own.count + global.count)
        for name in own.keys.sorted() {
            result.append(Link(name: name, params: own[name]?.placeholders ?? []))
        }
        for name in global.keys.sorted() where own[name] == nil {
            result.append(Link(name: name, params: global[name]?.placeholders ?? []))
        }
        return result
    }
}

extension Navigator {
    /// The actions of the stage's top screen.
    ///
    /// Computed from the stage without applying anything, by the rules `apply` follows (the
    /// property tests hold the two together): `back(K)` goes up K screens, and a tab bar leaves
    /// with its last tab, so it removes the top K screens — and the tab bar too when that would be
    /// the new top — each with its saved tab stacks; it applies when the stage keeps a screen and
    /// every removed screen is removable. A larger K removes all that a smaller one does, so the
    /// counts that apply are 1…`back`. `exit` is `back(1)` (whose removal is the top screen).
    /// Links are listed whether or not their target would accept the parameters a client sends.
    public func actions(for state: SessionState) -> Actions {
        let back = backLimit(of: state)
        let links = state.top.flatMap { scene(of: $0)?.actionLinks } ?? globalActionLinks
        return Actions(links: links, exit: back >= 1, back: back)
    }

    private func backLimit(of state: SessionState) -> Int {
        let screens = state.screens
        var limit = 0
        // back(count) keeps screens[..<kept] and removes the rest.
        for count in 1..<max(1, screens.count) {
            var kept = screens.count - count
            guard isRemovable(screens[kept]) else { break }
            if scene(of: screens[kept - 1])?.tabs != nil {
                kept -= 1
                guard kept > 0, isRemovable(screens[kept]) else { break }
                if scene(of: screens[kept - 1])?.tabs != nil {
                    // A tab bar that is a tab of another: the outer bar would select a tab of its
                    // own, so the rule above does not say what happens; asking the engine does.
                    guard (try? apply(.back(count), to: state))?.changed == true else { break }
                }
            }
            limit = count
        }
        return limit
    }

    /// Whether `screen` and every screen of its saved tab stacks may be removed.
    private func isRemovable(_ screen: Screen) -> Bool {
        guard scene(of: screen)?.removable ?? true else { return false }
        guard let saved = screen.tabs?.saved else { return true }
        return saved.values.allSatisfy { stack in stack.allSatisfy(isRemovable) }
    }
}
