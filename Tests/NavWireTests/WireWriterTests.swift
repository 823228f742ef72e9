import Foundation
import NavCore
import NavJSON
import NavSnapshot
import Testing

@testable import NavHTTP
@testable import NavSessions
@testable import NavTestSupport
@testable import NavWire

/// The direct session-view writer gives exactly the bytes of the plain `JSONValue` route.
@Suite struct WireWriterTests {
    static func reference(_ session: StoredSession, actions: Actions, events: [LifecycleEvent]?, token: String?) -> [UInt8] {
        var members: [String: JSONValue] = [
            "actions": [
                "back": .int(actions.back), "exit": .bool(actions.exit),
                "links": .array(actions.links.map { ["name": .string($0.name), "params": .array($0.params.map(JSONValue.string))] })
            ],
            "id": .string(session.id),
            "graph": ["name": .string(session.graphName), "version": .int(session.graphVersion)],
            "version": .int(session.state.version),
            "path": .string(session.state.path.description),
            "screens": .array(session.state.screens.map(\.referenceJSON)),
            "context": .object(session.state.context)
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
            .navigate("^/top/list_news(category=-3)/show_news(id=9)")
        ]
        for intent in intents {
            outcome = try navigator.apply(intent, to: outcome.state)
            let session = StoredSession(
                id: "0123abcd", graphName: "news", graphVersion: 2, tokenDigest: TokenDigest(bytes: []), state: outcome.state, createdAt: 0,
                touchedAt: 0
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

    /// A change's `lifecycle` messages are cut out of the events' JSON as the change wrote it, not
    /// written again: byte for byte what writing each event gives, for every shape of event,
    /// escapes, and details (written by the plain writes, not the cursor) holding `,`, `]`, `}`
    /// and quotes in strings. Ends that do not cut the JSON into the events are not used: the
    /// events are written instead.
    @Test func lifecycleMessagesCutFromTheEventsJSONMatchWritingThem() throws {
        let texts: [String?] = [nil, "", "e1", "a,b]c}d", "/tøp/日本(q=a%2Cb)", "a\"b\\c\n\t\u{01}", String(repeating: "\"", count: 100)]
        let plain = LifecycleEvent.everyShape(texts: texts, seqs: [1, 7, 1_000_000], transitions: [12, 0])
        var detailed = Array(plain.prefix(3))
        let value = try JSONValue(parsing: Array(#"{"a":[1,{"b":"],}\"["}],"c":"\\","d":[]}"#.utf8))
        for (index, detail) in [LifecycleEvent.Detail.value(value), .keys(["x,y", "]"]), .command("save}"), .versions(from: 1, to: 2)]
            .enumerated()
        {
            detailed.append(LifecycleEvent(seq: 90 + index, type: .result, screen: "s", scene: "t", transition: 3, detail: detail))
        }
        for batch in [Array(plain.prefix(1)), Array(plain.prefix(3)), plain, detailed] {
            var ends: [Int] = []
            let json = batch.jsonBytes(eventEnds: &ends)
            #expect(json == batch.jsonBytes)
            #expect(JSONWriter.cuts(ends, count: batch.count, of: json), "the events are cut, not written again")
            var written = JSONWriter(reservingCapacity: 64)
            written.writeLifecycleMessages(batch)
            var cut = JSONWriter(reservingCapacity: 64)
            cut.writeLifecycleMessages(batch, json: json, ends: ends)
            #expect(cut.finish() == written.finish())
        }
        let two = Array(plain.prefix(2))
        var ends: [Int] = []
        let json = two.jsonBytes(eventEnds: &ends)
        var written = JSONWriter(reservingCapacity: 64)
        written.writeLifecycleMessages(two)
        let expected = written.finish()
        for wrong in [
            [], [ends[0]], [ends[1], ends[0]], [ends[0], ends[1] - 1], [ends[0] + 1, ends[1]], [0, ends[1]], [ends[0], json.count]
        ] {
            var fallback = JSONWriter(reservingCapacity: 64)
            #expect(!JSONWriter.cuts(wrong, count: 2, of: json))
            fallback.writeLifecycleMessages(two, json: json, ends: wrong)
            #expect(fallback.finish() == expected, "\(wrong)")
        }
    }
}
