import Foundation
import NavCore
import NavJSON
import NavSnapshot
import Testing

@testable import NavTestSupport
@testable import NavWire

/// The API answers a screen and an event in the shapes a store keeps them, by decision: a change's
/// events are written once, and the same bytes go to the store and into the answer. These tests
/// hold openapi.yaml's `Event` and `Screen` schemas to NavSnapshot's stored shapes, both ways
/// (every member stored is documented, every documented member is stored), and NavWire's answers
/// to the stored bytes. A change to the API's shapes or to the stored ones fails here: it cannot
/// migrate stored sessions silently.
@Suite struct StoredShapeTests {
    static func spec() throws -> OpenAPIValidator {
        try OpenAPIValidator.shared.get()
    }

    /// The members a schema documents.
    static func properties(of schema: JSON) throws -> Set<String> {
        Set(try #require(schema["properties"]?.object).keys)
    }

    /// Events of every kind with every combination of `screen`, `scene`, `from` and `to`, and each
    /// detail an event may carry, on every kind.
    static func everyEvent() throws -> [LifecycleEvent] {
        let texts: [String?] = [nil, "e1", "show_news", "/top/list_news(category=1)", "a\"b\n"]
        var events = LifecycleEvent.everyShape(texts: texts, seqs: [1, 7, 1_000_000], transitions: [1, 12])
        let details: [LifecycleEvent.Detail] = [
            .keys([]), .keys(["locale", "user"]), .command("save"), .value(try JSONValue(parsing: Array(#"{"a":[1,"b"]}"#.utf8))),
            .value(.null), .versions(from: 1, to: 2)
        ]
        for (position, kind) in LifecycleEvent.Kind.allCases.enumerated() {
            for (index, detail) in details.enumerated() {
                events.append(
                    LifecycleEvent(
                        seq: 500 + position * details.count + index, type: kind, screen: index % 2 == 0 ? "e3" : nil,
                        scene: index % 2 == 0 ? "home" : nil, transition: 9, from: index % 3 == 0 ? "/top" : nil, detail: detail
                    ))
            }
        }
        return events
    }

    @Test func everyStoredEventIsTheAPIsEvent() throws {
        let spec = try Self.spec()
        let schema = try #require(spec.schema(named: "Event"))
        let documented = try Self.properties(of: schema)
        let required = Set(try #require(schema["required"]?.array).compactMap(\.string))
        let kinds = Set(try #require(schema["properties"]?["type"]?["enum"]?.array).compactMap(\.string))
        #expect(kinds == Set(LifecycleEvent.Kind.allCases.map(\.rawValue)), "openapi.yaml's event types are the stored ones")

        let events = try Self.everyEvent()
        let stored = try #require(try JSON(parsing: events.jsonBytes).array)
        #expect(stored.count == events.count)
        var written = Set<String>()
        for (event, json) in zip(events, stored) {
            let members = Set(try #require(json.object).keys)
            written.formUnion(members)
            #expect(required.isSubset(of: members), "\(event)")
            #expect(members.isSubset(of: documented), "\(event): \(members.subtracting(documented).sorted())")
            #expect(spec.validate(json, against: schema) == [], "\(event)")
        }
        #expect(written == documented, "documented and never stored: \(documented.subtracting(written).sorted())")
    }

    /// NavWire answers the stored bytes of events, in a change's answer (with or without the bytes
    /// the change wrote for the store), the event log's page and the event stream's messages.
    @Test func theAPIAnswersTheStoredEventBytes() throws {
        let events = try Self.everyEvent()
        let stored = events.jsonBytes
        let navigator = Navigator(graph: try Self.news())
        let state = try navigator.start(context: [:]).state
        let actions = navigator.actions(for: state)
        var fromEvents = JSONWriter()
        fromEvents.writeSessionView(id: "s", graphName: "news", graphVersion: 1, state: state, actions: actions, events: events)
        var fromBytes = JSONWriter()
        fromBytes.writeSessionView(
            id: "s", graphName: "news", graphVersion: 1, state: state, actions: actions, events: events, eventsJSON: stored)
        let view = fromEvents.finish()
        #expect(view == fromBytes.finish())
        #expect(view.firstRange(of: Array(",\"events\":".utf8) + stored) != nil)

        var page = JSONWriter()
        page.writeEventPage(events, next: 3)
        #expect(page.finish() == Array("{\"events\":".utf8) + stored + Array(",\"next\":3}".utf8))
        // A page that reached its bytes ends there, `next` naming its last event.
        var cut = JSONWriter()
        let held = cut.writeEventPage(events, next: 3, maxBytes: 400)
        #expect(held >= 1 && held < events.count)
        let cutPage = try JSON(parsing: cut.finish())
        let storedEvents = try #require(try JSON(parsing: stored).array)
        #expect(cutPage["events"]?.array == Array(storedEvents.prefix(held)))
        #expect(cutPage["next"]?.int == events[held - 1].seq)

        var ends: [Int] = []
        #expect(events.jsonBytes(eventEnds: &ends) == stored)
        var messages = JSONWriter()
        messages.writeLifecycleMessages(events)
        var expected: [UInt8] = []
        var start = 1
        for (event, end) in zip(events, ends) {
            expected += Array("id: \(event.seq)\nevent: lifecycle\ndata: ".utf8) + stored[start..<end] + Array("\n\n".utf8)
            start = end + 1
        }
        #expect(messages.finish() == expected)
    }

    static func news() throws -> Graph {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/news.json")
        return try Graph.decode(json: Array(try Data(contentsOf: url))).graph
    }

    /// Stages with pushed screens, parameters, state, a modal and a tab bar with saved stacks.
    static func states() throws -> [SessionState] {
        let navigator = Navigator(graph: try news())
        var outcome = try navigator.start(context: ["user": "u1", "locale": "ja"])
        var states = [outcome.state]
        let intents: [Intent] = [
            .navigate("home#friend/show_friend(name=k%2Cen)"),
            .navigate("^/top/home#profile/help"),
            .patchState(screen: "e5", patch: ["editing": true]),
            .navigate("^/top/home#profile!login"),
            .navigate("^/top/list_news(category=-3)/show_news(id=9)")
        ]
        for intent in intents {
            outcome = try navigator.apply(intent, to: outcome.state)
            states.append(outcome.state)
        }
        return states
    }

    @Test func everyStoredScreenIsTheAPIsScreen() throws {
        let spec = try Self.spec()
        let schema = try #require(spec.schema(named: "Screen"))
        let documented = try Self.properties(of: schema)
        let documentedTabs = try Self.properties(of: try #require(schema["properties"]?["tabs"]))
        var written = Set<String>()
        var writtenTabs = Set<String>()
        func collect(_ screen: JSON) throws {
            written.formUnion(try #require(screen.object).keys)
            guard let tabs = screen["tabs"] else { return }
            writtenTabs.formUnion(try #require(tabs.object).keys)
            for stack in try #require(tabs["saved"]?.object).values {
                for saved in try #require(stack.array) { try collect(saved) }
            }
        }
        for state in try Self.states() {
            let snapshot = try JSON(parsing: state.snapshotBytes)
            let screens = try #require(snapshot["screens"]?.array)
            for screen in screens {
                #expect(spec.validate(screen, against: schema) == [], "\(screen)")
                try collect(screen)
            }
            // The view's screens are the snapshot's, byte for byte.
            var screenBytes = JSONWriter()
            screenBytes.writeScreens(state.screens)
            let stored = screenBytes.finish()
            #expect(state.snapshotBytes.firstRange(of: Array(",\"screens\":".utf8) + stored + Array(",\"version\":".utf8)) != nil)
            var view = JSONWriter()
            let graph = try Self.news()
            view.writeSessionView(
                id: "s", graphName: "news", graphVersion: 1, state: state, actions: Navigator(graph: graph).actions(for: state))
            #expect(view.finish().firstRange(of: Array(",\"screens\":".utf8) + stored + Array(",\"version\":".utf8)) != nil)
        }
        #expect(written == documented, "documented and never stored: \(documented.subtracting(written).sorted())")
        #expect(writtenTabs == documentedTabs)
    }
}
