import NavCore
import NavJSON
import NavSnapshot
import Testing

/// The exact bytes a store keeps for a snapshot and for an event log: stores hold them across
/// versions of navd, so any change to them is a change of the storage format (a new snapshot
/// schema that still reads the old bytes), never a side effect of another change.
@Suite struct StoredBytesTests {
    /// A stage with every member a screen may have: parameters of each type, deps, state, a
    /// container, a modal, and a tab bar with a saved stack.
    static let state = SessionState(
        version: 7,
        screens: [
            Screen(
                id: "e1", scene: "home", segue: .push, container: .navigation, deps: ["user": "u\"1"],
                state: ["draft": ["é\n", 2.5, true, .null]],
                tabs: TabsState(
                    selected: "feed",
                    saved: [
                        "profile": [Screen(id: "e3", scene: "profile", segue: .tab, container: .none)],
                        "friends": [
                            Screen(id: "e4", scene: "friends", segue: .tab, container: .none),
                            Screen(
                                id: "e5", scene: "show_friend", segue: .push, container: .none,
                                params: ScreenParams(["name": .string("k,en")]))
                        ]
                    ])
            ),
            Screen(id: "e2", scene: "feed", segue: .tab, container: .none),
            Screen(
                id: "e6", scene: "show_news", segue: .modal, container: .navigation,
                params: ScreenParams(["id": .int(9), "star": .bool(false), "tag": .string("a/b")]))
        ],
        context: ["locale": "ja", "user": "u1", "n": 1.5], screenCounter: 6, eventCounter: 41, pending: "/top/settings"
    )

    @Test func aSnapshotsBytes() {
        let expected =
            ##"{"context":{"locale":"ja","n":1.5,"user":"u1"},"eventCounter":41,"graphVersion":3,"pending":"/top/settings","schema":2,"##
            + ##""screenCounter":6,"screens":["##
            + ##"{"container":"navigation","deps":{"user":"u\"1"},"id":"e1","params":{},"scene":"home","segue":"/","##
            + ##""state":{"draft":["é\n",2.5,true,null]},"tabs":{"saved":{"##
            + ##""friends":[{"container":"none","deps":{},"id":"e4","params":{},"scene":"friends","segue":"#","state":{}},"##
            + ##"{"container":"none","deps":{},"id":"e5","params":{"name":"k,en"},"scene":"show_friend","segue":"/","state":{}}],"##
            + ##""profile":[{"container":"none","deps":{},"id":"e3","params":{},"scene":"profile","segue":"#","state":{}}]},"##
            + ##""selected":"feed"}},"##
            + ##"{"container":"none","deps":{},"id":"e2","params":{},"scene":"feed","segue":"#","state":{}},"##
            + ##"{"container":"navigation","deps":{},"id":"e6","params":{"id":9,"star":false,"tag":"a/b"},"scene":"show_news","##
            + ##""segue":"!","state":{}}],"version":7}"##
        #expect(String(decoding: Self.state.snapshotBytes(graphVersion: 3), as: UTF8.self) == expected)
        var withoutVersion = Self.state
        withoutVersion.pending = nil
        #expect(
            String(decoding: withoutVersion.snapshotBytes, as: UTF8.self)
                == expected.replacingOccurrences(of: ##""graphVersion":3,"pending":"/top/settings","##, with: ""))
    }

    @Test func anEventLogsBytes() throws {
        let events = [
            LifecycleEvent(seq: 1, type: .transitionStart, screen: nil, scene: nil, transition: 2, from: "/top", to: "/top/a(q=1)"),
            LifecycleEvent(seq: 2, type: .awake, screen: "e2", scene: "a", transition: 2),
            LifecycleEvent(seq: 3, type: .transitionEnd, screen: nil, scene: nil, transition: 2, from: "/top", to: "/top/a(q=1)"),
            LifecycleEvent(seq: 4, type: .contextChanged, screen: nil, scene: nil, transition: 3, detail: .keys(["locale", "user"])),
            LifecycleEvent(seq: 5, type: .stateChanged, screen: "e2", scene: "a", transition: 4, detail: .command("save\"")),
            LifecycleEvent(seq: 6, type: .result, screen: "e1", scene: "top", transition: 5, from: "a", detail: .value(["ok": true])),
            LifecycleEvent(seq: 7, type: .graphChanged, screen: nil, scene: nil, transition: 6, detail: .versions(from: 1, to: 2))
        ]
        let expected =
            ##"[{"from":"/top","scene":null,"screen":null,"seq":1,"to":"/top/a(q=1)","transition":2,"type":"transitionStart"},"##
            + ##"{"scene":"a","screen":"e2","seq":2,"transition":2,"type":"awake"},"##
            + ##"{"from":"/top","scene":null,"screen":null,"seq":3,"to":"/top/a(q=1)","transition":2,"type":"transitionEnd"},"##
            + ##"{"keys":["locale","user"],"scene":null,"screen":null,"seq":4,"transition":3,"type":"contextChanged"},"##
            + ##"{"command":"save\"","scene":"a","screen":"e2","seq":5,"transition":4,"type":"stateChanged"},"##
            + ##"{"from":"a","scene":"top","screen":"e1","seq":6,"transition":5,"type":"result","value":{"ok":true}},"##
            + ##"{"fromVersion":1,"scene":null,"screen":null,"seq":7,"toVersion":2,"transition":6,"type":"graphChanged"}]"##
        #expect(String(decoding: events.jsonBytes, as: UTF8.self) == expected)
        // And back: the stored log reads as the events written.
        let read = try #require(try JSONValue(parsing: events.jsonBytes).arrayValue).compactMap(LifecycleEvent.init(json:))
        #expect(read == events)
    }
}
