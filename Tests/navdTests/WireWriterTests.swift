import Foundation
import NavCore
@testable import navd
@testable import NavHTTP
import NavJSON
@testable import NavServer
@testable import NavWire
import Testing

/// The direct session-view writer gives exactly the bytes of the plain `JSONValue` route.
@Suite struct WireWriterTests {
    static func reference(_ session: StoredSession, actions: Actions, events: [LifecycleEvent]?, token: String?) -> [UInt8] {
        var members: [String: JSONValue] = [
            "actions": [
                "back": .int(actions.back), "exit": .bool(actions.exit),
                "links": .array(actions.links.map { ["name": .string($0.name), "params": .array($0.params.map(JSONValue.string))] }),
            ],
            "id": .string(session.id),
            "graph": ["name": .string(session.graphName), "version": .int(session.graphVersion)],
            "version": .int(session.state.version),
            "path": .string(session.state.path.description),
            "screens": .array(session.state.screens.map(\.referenceJSON)),
            "context": .object(session.state.context),
        ]
        if let events { members["events"] = .array(events.map(\.referenceJSON)) }
        if let token {
            members["token"] = .string(token)
            members["watchToken"] = .string("watch-" + token)
        }
        return JSONValue.object(members).jsonBytes
    }

    @Test func sessionViewsMatchTheReferenceEncoding() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/news.json")
        let graph = try Graph.decode(json: Array(try Data(contentsOf: url))).graph
        let navigator = Navigator(graph: graph)
        var outcome = try navigator.start(context: ["user": "u\"1", "locale": "ja", "n": 1.5])
        let intents: [Intent] = [
            .navigate("home#friend/show_friend(name=k%2Cen)"),
            .navigate("^/top/home#profile/help"),
            .patchState(screen: "e5", patch: ["editing": true, "draft": ["bio": "é\n"]]),
            .navigate("^/top/home#profile!login"),
            .navigate("^/top/list_news(category=-3)/show_news(id=9)"),
        ]
        for intent in intents {
            outcome = try navigator.apply(intent, to: outcome.state)
            let session = StoredSession(
                id: "0123abcd", graphName: "news", graphVersion: 2, tokenDigest: TokenDigest(bytes: []), state: outcome.state, createdAt: 0, touchedAt: 0
            )
            for (events, token) in [(nil, nil), (outcome.events, nil), (outcome.events, "secret")] as [([LifecycleEvent]?, String?)] {
                let actions = navigator.actions(for: session.state)
                var writer = JSONWriter()
                writer.writeSessionView(
                    id: session.id, graphName: session.graphName, graphVersion: session.graphVersion, state: session.state,
                    actions: actions, events: events, token: token.map { ($0, "watch-" + $0) }
                )
                let fast = writer.finish()
                #expect(fast == Self.reference(session, actions: actions, events: events, token: token), "\(intent)")
                #expect((try? JSONValue(parsing: fast)) != nil)
            }
            // What the stores write: the snapshot and the event batch.
            #expect(outcome.state.snapshotBytes == outcome.state.referenceSnapshot.jsonBytes)
            #expect(outcome.events.jsonBytes == JSONValue.array(outcome.events.map(\.referenceJSON)).jsonBytes)
        }
    }

    /// Events written in one run through a cursor give the bytes of the plain writes: every kind,
    /// with and without the optional fields, strings that need escapes or are not ASCII, and
    /// escapes enough to outgrow the estimate (the run then falls back to the plain writes).
    @Test(arguments: [0, 16, 100, 4096])
    func eventsMatchThePlainWrites(capacity: Int) throws {
        let texts: [String?] = [nil, "", "e1", "show_news", "/tøp/日本(q=a%2Cb)", "a\"b\\c\n\t\u{01}", String(repeating: "\"", count: 100)]
        let events = LifecycleEvent.everyShape(texts: texts, seqs: [0, 7, 1_000_000, -3], transitions: [Int.max, 12, Int.min, 0])
        let reference = JSONValue.array(events.map(\.referenceJSON)).jsonBytes
        #expect(events.jsonBytes == reference)
        for batch in [Array(events.prefix(1)), Array(events.prefix(8)), events, []] {
            var writer = JSONWriter(reservingCapacity: capacity)
            writer.writeLiteral("x")
            writer.writeEvents(batch)
            #expect(writer.finish() == Array("x".utf8) + JSONValue.array(batch.map(\.referenceJSON)).jsonBytes)
            var checked = JSONWriter(reservingCapacity: capacity)
            batch.withUnsafeBufferPointer { checked.writeEventsChecked($0) }
            #expect(checked.finish() == JSONValue.array(batch.map(\.referenceJSON)).jsonBytes)
        }
        #expect((try JSONValue(parsing: events.jsonBytes)).arrayValue?.count == events.count)
    }
}
