import NavCore
import NavJSON
import NavTours
import Testing

@Suite struct TourDocumentTests {
    /// What `navd tours` writes, `navd replay` reads back (the summary is for people, not read).
    @Test(arguments: Coverage.allCases)
    func roundTrip(_ cover: Coverage) throws {
        let (graph, document) = try example("news.json")
        var plan = try TourPlanner(graph: graph, document: document).plan(cover)
        let text = ReadableJSON.text(plan.json)
        let read = try TourDocument(json: try JSONValue(parsing: text))
        plan.summary = nil
        #expect(read == plan)
    }

    @Test(arguments: [
        (#"[]"#, ""),
        (#"{"format": "other"}"#, "/format"),
        (#"{"format": "navd-tours/1", "graph": {"name": "n"}}"#, "/graph"),
        (#"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "all"}"#, "/cover"),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "links", "tours": [{"start": {"path": "/a", "events": []}, "steps": [{"intent": {"jump": 1}, "path": "/b", "events": []}]}]}"#,
            "/tours/0/steps/0/intent"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "links", "tours": [{"start": {"path": "/a", "events": []}, "steps": [{"intent": {"back": 0}, "path": "/b", "events": []}]}]}"#,
            "/tours/0/steps/0/intent/back"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "recorded", "tours": [{"start": {"path": "/a", "events": [], "request": 5}, "steps": []}]}"#,
            "/tours/0/start/request"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "recorded", "tours": [{"start": {"path": "/a", "events": [], "context": []}, "steps": []}]}"#,
            "/tours/0/start/context"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "recorded", "recorded": {"session": 1}}"#,
            "/recorded"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "recorded", "tours": [{"start": {"path": "/a", "events": []}, "steps": [{"intent": {"upgrade": {"version": 1}, "back": 1}, "path": "/b", "events": []}]}]}"#,
            "/tours/0/steps/0/intent"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "recorded", "tours": [{"start": {"path": "/a", "events": []}, "steps": [{"intent": {"state": {"screen": 3, "patch": {}}}, "path": "/b", "events": []}]}]}"#,
            "/tours/0/steps/0/intent/state/screen"
        ),
        (
            #"{"format": "navd-tours/1", "graph": {"name": "n", "fingerprint": "f"}, "cover": "links", "tours": [{"start": {"path": "/a", "events": [1]}, "steps": []}]}"#,
            "/tours/0/start/events"
        )
    ])
    func malformedDocumentsNameTheirPointer(_ json: String, _ pointer: String) throws {
        #expect { try TourDocument(json: try JSONValue(parsing: json)) } throws: { error in
            (error as? TourDocumentError)?.pointer == pointer
        }
    }

    @Test(arguments: [
        (TourIntent.navigate("^/top#home"), #"{"navigate":"^/top#home"}"#, "navigate ^/top#home"),
        (.link("show", params: ["id": 4, "q": "a b"]), #"{"link":"show","params":{"id":4,"q":"a b"}}"#, "link show(id=4,q=a b)"),
        (.back(2), #"{"back":2}"#, "back 2"),
        (.exit, #"{"exit":{}}"#, "exit"),
        (.link("news", params: [:]), #"{"link":"news"}"#, "link news"),
        (.apply(.back(1, result: "x")), #"{"back":1,"result":"x"}"#, #"{"back":1,"result":"x"}"#),
        (.apply(.exit(result: ["n": 3])), #"{"exit":{"result":{"n":3}}}"#, #"{"exit":{"result":{"n":3}}}"#),
        (
            .apply(.command(screen: "s3", name: "type", args: ["text": "hi"])),
            #"{"command":{"args":{"text":"hi"},"name":"type","screen":"s3"}}"#,
            #"{"command":{"args":{"text":"hi"},"name":"type","screen":"s3"}}"#
        ),
        (.apply(.patchContext(["user": "u1"])), #"{"context":{"user":"u1"}}"#, #"{"context":{"user":"u1"}}"#),
        (
            .apply(.batch([.navigate("^/top"), .back(1)])), #"{"intents":[{"navigate":"^/top"},{"back":1}]}"#,
            #"{"intents":[{"navigate":"^/top"},{"back":1}]}"#
        ),
        (.confirm(.navigate("^/top")), #"{"confirm":{"navigate":"^/top"}}"#, "confirm navigate ^/top"),
        (.upgrade(version: 2), #"{"upgrade":{"version":2}}"#, "upgrade to version 2"),
        (.upgrade(version: nil), #"{"upgrade":{}}"#, "upgrade")
    ])
    func intentForms(_ intent: TourIntent, _ json: String, _ text: String) throws {
        var writer = JSONWriter()
        writer.write(intent.json)
        #expect(String(decoding: writer.finish(), as: UTF8.self) == json)
        #expect(try TourIntent(json: try JSONValue(parsing: json), at: "") == intent)
        #expect(intent.description == text)
    }

    /// A recorded document (what `navd record` writes) reads back as written.
    @Test func recordedRoundTrip() throws {
        let document = TourDocument(
            graphName: "news", fingerprint: "fnv1a64:0123456789abcdef", cover: nil, context: ["locale": "en"],
            tours: [
                Tour(
                    startPath: "/top/help", startEvents: ["transitionStart"], request: "^/top/help", context: ["user": "u1"],
                    steps: [
                        TourStep(intent: .confirm(.batch([.navigate("^/top")])), path: "/top", events: ["transitionStart"]),
                        TourStep(intent: .upgrade(version: 2), path: "/top", events: ["graphChanged"])
                    ])
            ],
            recording: .init(session: "abc", graphVersion: 1, to: 3)
        )
        let read = try TourDocument(json: try JSONValue(parsing: ReadableJSON.text(document.json)))
        #expect(read == document)
        #expect(document.json["cover"] == "recorded")
    }

    /// The fingerprint follows the content, not the text: key order and spacing do not change it.
    @Test func fingerprintFollowsContent() throws {
        let one = try JSONValue(parsing: #"{"name": "g", "start": "/a", "scenes": {"a": {}, "b": {}}}"#)
        let same = try JSONValue(parsing: #"{"scenes":{"b":{},"a":{}},"start":"/a","name":"g"}"#)
        let other = try JSONValue(parsing: #"{"name": "g", "start": "/a", "scenes": {"a": {}, "c": {}}}"#)
        #expect(GraphFingerprint.of(one) == GraphFingerprint.of(same))
        #expect(GraphFingerprint.of(one) != GraphFingerprint.of(other))
        #expect(GraphFingerprint.of(one).range(of: #"^fnv1a64:[0-9a-f]{16}$"#, options: .regularExpression) != nil)
    }

    @Test func mismatchesSayWhereAndWhat() {
        let agree = TourMismatch.compare(
            tour: 1, step: 2, intent: "back 1", path: "/a", events: ["x"], observed: TourObservation(path: "/a", events: ["x"]))
        #expect(agree == nil)
        let path = TourMismatch.compare(
            tour: 2, step: 3, intent: "link show(id=1)", path: "/a/b", events: [], observed: TourObservation(path: "/a/c", events: []))
        #expect(path?.description == "tour 2, step 3 (link show(id=1)): expected path /a/b, got path /a/c")
        let events = TourMismatch.compare(
            tour: 1, step: 1, intent: "exit", path: "/a", events: ["a", "b", "c"], observed: TourObservation(path: "/a", events: ["a", "c"])
        )
        #expect(events?.expected == "events [a, ▶b, c]")
        #expect(events?.got == "events [a, ▶c] (first difference at event 2)")
        let shorter = TourMismatch.compare(
            tour: 1, step: 0, intent: "start /a", path: "/a", events: ["a"], observed: TourObservation(path: "/a", events: ["a", "b"]))
        #expect(shorter?.expected == "events [a, ▶(end)]")
        #expect(shorter?.description.hasPrefix("tour 1, start (start /a):") == true)
        let refused = TourMismatch.compare(
            tour: 1, step: 1, intent: "exit", path: "/a", events: [],
            observed: TourObservation(refusedWith: "not_removable", detail: "'a' is not removable"))
        #expect(refused?.got == "refused: not_removable: 'a' is not removable")
    }
}
