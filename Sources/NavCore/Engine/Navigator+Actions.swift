/// What the top screen of a stage can do now (docs/design.md, "Actions"), so a client renders its buttons
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
    public var links: ActionLinks
    /// Whether `exit` would apply now.
    public var exit: Bool
    /// The largest count that `back` would apply now; 0 when none would.
    public var back: Int

    public init(links: ActionLinks, exit: Bool, back: Int) {
        self.links = links
        self.exit = exit
        self.back = back
    }
}

extension Actions {
    /// The graph's global links by name: the list every scene's ``ActionLinks`` shares.
    static func globalLinks(_ global: [String: NavCore.Link]) -> [Link] {
        global.keys.sorted().map { name in Link(name: name, params: global[name]?.placeholders ?? []) }
    }

    /// A scene's links by name, then the global links by name that none of them hides.
    /// - Parameters:
    ///   - global: ``globalLinks(_:)`` of the graph, shared (retained, not copied).
    ///   - positions: each global link's position in `global`, by name.
    static func links(own: [String: NavCore.Link], global: [Link], positions: [String: Int]) -> ActionLinks {
        let names = own.keys.sorted()
        let ownLinks = names.map { name in Link(name: name, params: own[name]?.placeholders ?? []) }
        let hidden = names.compactMap { positions[$0] }.sorted()
        return ActionLinks(own: ownLinks, global: global, hidden: hidden)
    }
}

/// The links of a top screen as ``Actions`` lists them: the scene's own links by name, then the
/// graph's global links by name that none of them hides.
///
/// The global list is one array made once per graph and shared by every scene (each scene retains
/// it, none copies it), and a scene keeps only the positions its own links hide: a graph's link
/// storage grows with its scenes plus its links, never their product (docs/design.md, "Graphs").
public struct ActionLinks: RandomAccessCollection, Sendable, Hashable {
    /// The scene's own links, by name.
    let own: [Actions.Link]
    /// The graph's global links, by name: the same array for every scene of a graph.
    let global: [Actions.Link]
    /// Positions in `global` of links an own link of the same name hides, ascending (at most one
    /// per own link).
    let hidden: [Int]

    init(own: [Actions.Link], global: [Actions.Link], hidden: [Int]) {
        self.own = own
        self.global = global
        self.hidden = hidden
    }

    /// A list given as it is (no global part).
    public init(_ links: [Actions.Link]) {
        self.init(own: links, global: [], hidden: [])
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { own.count + global.count - hidden.count }

    public subscript(position: Int) -> Actions.Link {
        if position < own.count { return own[position] }
        // The position among the shown global links, moved past each hidden one before it.
        var index = position - own.count
        for skipped in hidden {
            guard skipped <= index else { break }
            index += 1
        }
        return global[index]
    }

    /// Walks the own links, then the global ones, stepping over the hidden: O(1) a link.
    public struct Iterator: IteratorProtocol {
        private let links: ActionLinks
        private var ownIndex = 0
        private var globalIndex = 0
        private var hiddenIndex = 0

        init(_ links: ActionLinks) {
            self.links = links
        }

        public mutating func next() -> Actions.Link? {
            if ownIndex < links.own.count {
                defer { ownIndex += 1 }
                return links.own[ownIndex]
            }
            while hiddenIndex < links.hidden.count, links.hidden[hiddenIndex] == globalIndex {
                hiddenIndex += 1
                globalIndex += 1
            }
            guard globalIndex < links.global.count else { return nil }
            defer { globalIndex += 1 }
            return links.global[globalIndex]
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// Equal when they list the same links in the same order, however they are stored.
    public static func == (lhs: ActionLinks, rhs: ActionLinks) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for link in self { hasher.combine(link) }
    }
}

extension ActionLinks: ExpressibleByArrayLiteral {
    public init(arrayLiteral links: Actions.Link...) {
        self.init(links)
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
