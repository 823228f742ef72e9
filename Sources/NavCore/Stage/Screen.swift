import NavJSON

/// One instance of a scene on the stage.
public struct Screen: Sendable, Hashable {
    /// Stable and unique within the session: `e1`, `e2`, … from the session's counter.
    public var id: String
    public var scene: String
    public var segue: Segue
    public var container: Container
    /// Where the navigator that made this screen keeps its scene (`SceneEntry.index`), so that later
    /// navigations find the scene of a screen they keep without hashing its name; `-1` when unknown
    /// (a screen made by a client or read from a snapshot). Only a hint: it is checked against
    /// `scene` before use, it is never written out, and it is `Cached`, so not part of the screen's
    /// value (`==`, `hash(into:)`). Declared here, in the padding after `segue` and `container`, so
    /// a `Screen` is no larger.
    @Cached var sceneHint: Int32 = -1
    /// Sorted by key (see `ScreenParams`).
    public var params: ScreenParams
    /// Session-context values injected at creation (StoryCode), before `awake`.
    public var deps: [String: JSONValue]
    /// Per-screen state (UseCaseKit), a JSON object.
    public var state: JSONValue
    /// Set on a tabs screen: which tab is selected and the saved stacks of the others.
    public var tabs: TabsState?

    /// The screen as one path component, parameters in their canonical text.
    public var component: PathComponent {
        PathComponent(name: scene, segue: segue, container: container, params: params.mapValues(\.text))
    }
}

extension Screen {
    // Declared here rather than in the type, so that the type keeps its synthesised memberwise
    // initialiser, `init(id:scene:segue:container:sceneHint:params:deps:state:tabs:)` (internal, as
    // `sceneHint` is): a screen built by an initialiser with a body of its own is copied once more
    // when it is stored (its fields retained, then the original released), one built by the
    // memberwise initialiser is not. NavCore makes its screens with the memberwise one.
    public init(
        id: String, scene: String, segue: Segue, container: Container, params: ScreenParams = [:],
        deps: [String: JSONValue] = [:], state: JSONValue = .object([:]), tabs: TabsState? = nil
    ) {
        self.init(
            id: id, scene: scene, segue: segue, container: container, sceneHint: -1, params: params, deps: deps,
            state: state, tabs: tabs
        )
    }
}

/// The tab bar of a tabs screen.
public struct TabsState: Sendable, Hashable {
    /// The scene name of the tab on screen.
    public var selected: String
    /// Stacks of the tabs the user left, by tab scene name, tab root first.
    public var saved: [String: [Screen]]

    public init(selected: String, saved: [String: [Screen]] = [:]) {
        self.selected = selected
        self.saved = saved
    }
}
