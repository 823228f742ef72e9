/// Everything NavCore knows about one session: the stage and the counters that keep ids deterministic.
public struct SessionState: Sendable, Hashable {
    /// Up by exactly one per applied change.
    public var version: Int
    /// Root first, visible top last.
    public var screens: [Screen]
    /// Session context: the values `requires` checks and `inject` copies.
    public var context: [String: JSONValue]
    /// How many screen ids have been handed out (`e1` … `e\(screenCounter)`).
    public var screenCounter: Int
    /// The `seq` of the last event emitted.
    public var eventCounter: Int

    public init(
        version: Int = 0, screens: [Screen] = [], context: [String: JSONValue] = [:], screenCounter: Int = 0,
        eventCounter: Int = 0
    ) {
        self.version = version
        self.screens = screens
        self.context = context
        self.screenCounter = screenCounter
        self.eventCounter = eventCounter
    }

    /// The stage as a path.
    public var path: Path {
        Path(screens.map(\.component))
    }

    /// `path.description`, written straight from the screens without building the path.
    var pathDescription: String {
        canonicalPathText(of: screens)
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
