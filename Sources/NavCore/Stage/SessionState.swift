import NavJSON

/// Everything NavCore knows about one session: the stage and the counters that keep ids deterministic.
public struct SessionState: Sendable, Hashable {
    /// Up by exactly one per applied change.
    public var version: Int
    /// Root first, visible top last.
    public var screens: [Screen] {
        // Any change of the stage, in place or whole, forgets its text.
        didSet { stageText = nil }
    }
    /// Session context: the values `requires` checks and `inject` copies.
    public var context: [String: JSONValue]
    /// How many screen ids have been handed out (`e1` … `e\(screenCounter)`).
    public var screenCounter: Int
    /// The `seq` of the last event emitted.
    public var eventCounter: Int
    /// The absolute canonical path a navigation was redirected away from (a scene's `redirect`),
    /// waiting for a context change that satisfies its requirements (docs/design.md, "Redirect and resume").
    public var pending: String?
    /// `canonicalPathText(of: screens)` when it is known: the `to` text of the navigation that made
    /// this stage, which is the `from` text of the next one. Cleared whenever `screens` is set or
    /// changed in place; never written to a snapshot, and `Cached`, so not part of the state's
    /// value (`==`, `hash(into:)`).
    @Cached var stageText: String? = nil

    public init(
        version: Int = 0, screens: [Screen] = [], context: [String: JSONValue] = [:], screenCounter: Int = 0,
        eventCounter: Int = 0, pending: String? = nil
    ) {
        self.version = version
        self.screens = screens
        self.context = context
        self.screenCounter = screenCounter
        self.eventCounter = eventCounter
        self.pending = pending
    }

    /// Puts the screens in an array of about their count, if they are in a much larger one (an
    /// array grown by appending keeps up to as much spare room as it uses, which a store holding
    /// many idle sessions would keep too). An array made for exactly its count can still have a
    /// little room, since the allocator rounds a request up to its next size class (jemalloc's are
    /// up to a quarter apart): room within that is left alone, or every call would copy again. The
    /// stage itself does not change, so what NavCore keeps about it is kept as well; assigning
    /// `screens` a copy would forget it.
    public mutating func compactScreens() {
        guard screens.capacity > Self.roomyCapacity(for: screens.count) else { return }
        let text = stageText
        screens = screens.withUnsafeBufferPointer { Array($0) }
        stageText = text
    }

    /// The most capacity an array of `count` screens made for its count can have: the count, plus a
    /// quarter for an allocator's size classes, plus one for its header's share.
    public static func roomyCapacity(for count: Int) -> Int {
        count + count / 4 + 1
    }

    /// The stage as a path.
    public var path: Path {
        Path(screens.map(\.component))
    }

    /// The stage's canonical path text, `path.description`: the cached text when there is one,
    /// otherwise written straight from the screens without building the path.
    public var pathText: String {
        stageText ?? canonicalPathText(of: screens)
    }

    public var top: Screen? { screens.last }

    /// Every screen of the session: on the stage and in saved tab stacks.
    public var allScreens: [Screen] {
        var result: [Screen] = []
        func collect(_ screens: [Screen]) {
            for screen in screens {
                result.append(screen)
                if let tabs = screen.tabs {
                    for name in tabs.saved.keys.sorted() { collect(tabs.saved[name] ?? []) }
                }
            }
        }
        collect(screens)
        return result
    }
}
