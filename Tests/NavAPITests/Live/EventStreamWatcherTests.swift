import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavAPI
@testable import NavHTTP
@testable import NavSessions
@testable import NavTestSupport

/// A stream's watcher without sockets: its messages are read straight out of its
/// ``ResponseStream`` (not yet bound to a connection, so everything written stays buffered).
@Suite struct EventStreamWatcherTests {
    struct Fixture {
        let sessions: SessionService
        let id: String
        let token: String

        init() throws {
            sessions = try TestFixtures.service(maxSessions: 10)
            let created = try sessions.create(graph: nil, start: nil, context: [:])
            id = created.session.id
            token = created.token
        }

        func navigate(_ path: String) throws {
            _ = try sessions.apply(.intent(.navigate(path)), to: id, credentials: Credentials(bearer: Token.digest(token)), ifMatch: nil) {
                $0
            }
        }

        func watcher(bufferLimit: Int = 1 << 20, lastSeq: Int? = nil) throws -> (EventStream, ResponseStream) {
            let session = try sessions.read(id, credentials: Credentials(bearer: Token.digest(token)))
            let stream = ResponseStream(bufferLimit: bufferLimit)
            let counter = session.state.eventCounter
            let watcher = EventStream(id: id, sessions: sessions, stream: stream, lastSeq: lastSeq ?? counter, viewSeq: counter)
            try sessions.live.add(watcher, to: id)
            return (watcher, stream)
        }
    }

    /// What the stream holds, as `(event, id)` pairs of its messages.
    static func messages(_ stream: ResponseStream) -> [(event: String, id: Int?)] {
        var bytes: [UInt8] = []
        var buffer = [CChar](repeating: 0, count: 1 << 16)
        while case .bytes(let count) = buffer.withUnsafeMutableBufferPointer({ stream.read(into: $0.baseAddress!, capacity: $0.count) }) {
            bytes += buffer[..<count].map { UInt8(bitPattern: $0) }
        }
        return String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard let event = lines.first(where: { $0.hasPrefix("event: ") })?.dropFirst(7) else { return nil }
            let id = lines.first(where: { $0.hasPrefix("id: ") }).flatMap { Int($0.dropFirst(4)) }
            return (String(event), id)
        }
    }

    static func waitFor(_ condition: () -> Bool) {
        for _ in 0..<200 where !condition() { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// A watched change's answer is put together from the view written for its watchers: the
    /// same bytes as the answer of a change nobody watches.
    @Test func aWatchedChangesAnswerIsTheAnswerOfAnUnwatchedOne() throws {
        let fixture = try Fixture()
        let credentials = Credentials(bearer: Token.digest(fixture.token))
        let (_, stream) = try fixture.watcher()
        let intents: [Intent] = [
            .navigate("list_news(category=2)"), .patchContext(["user": "ann", "note": "a \"quoted\" é"]), .back(1, result: ["x": 1])
        ]
        for intent in intents {
            let (mutation, answer) = try fixture.sessions.apply(.intent(intent), to: fixture.id, credentials: credentials, ifMatch: nil) {
                ($0, fixture.sessions.answer(to: $0))
            }
            #expect(mutation.watchedView != nil)
            #expect(answer == fixture.sessions.view(of: mutation.session, events: mutation.events, eventsJSON: mutation.eventsJSON))
            _ = try JSONValue(parsing: answer)
        }
        #expect(Self.messages(stream).filter { $0.event == "view" }.count >= 3)
    }

    @Test func changesArriveInOrderWhetherSeenLiveOrReadFromTheStore() throws {
        let fixture = try Fixture()
        // A watcher that has seen nothing after seq 2: its first live change is out of order for it,
        // so it reads 3… from the store, in order, then goes on live.
        let (_, stream) = try fixture.watcher(lastSeq: 2)
        try fixture.navigate("help")
        try fixture.navigate("..")
        var seen: [Int] = []
        var views = 0
        // Reading takes what the stream holds: gather until the last change's view came.
        for _ in 0..<200 where !(seen.last == 19 && views >= 1) {
            for message in Self.messages(stream) {
                if let id = message.id { seen.append(id) }
                if message.event == "view", seen.last == 19 { views += 1 }
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(seen == Array(3...19))
        #expect(views >= 1)
    }

    @Test func aWatcherThatCannotKeepUpIsToldItLagsAndIsLetGo() throws {
        let fixture = try Fixture()
        // Room for the opening and a few changes, never read.
        let (_, stream) = try fixture.watcher(bufferLimit: 4096)
        for round in 0..<40 { try fixture.navigate(round % 2 == 0 ? "help" : "..") }
        let messages = Self.messages(stream)
        #expect(messages.last?.event == "end")
        #expect(!stream.isOpen)
        #expect(!fixture.sessions.live.isWatched(fixture.id))
        #expect(fixture.sessions.live.watchersDropped.load(ordering: .relaxed) == 1)
        // Whatever it got before, it got in order and whole: its last id is where it resumes.
        let ids = messages.compactMap(\.id)
        #expect(ids == Array((6...).prefix(ids.count)))
        // The writers went on unhindered: every change was applied.
        #expect(try fixture.sessions.store.load(fixture.id)?.state.version == 41)
    }

    /// A long poll, once answered, is let go whole: nothing it left behind (its wait's timer, a
    /// handler for a hang-up that can no longer come) keeps it, or its answer, for the rest of
    /// its wait. Clients that open and drop long polls fast would otherwise pile them up.
    @Test func anAnsweredLongPollIsFreedBeforeItsWaitEnds() throws {
        let fixture = try Fixture()
        let credentials = Credentials(bearer: Token.digest(fixture.token))
        weak var answer: DeferredResponse?
        do {
            let response = try LongPoll.start(fixture.id, sessions: fixture.sessions, seconds: 60) { () throws(ServiceError) in
                let (_, events, _) = try fixture.sessions.events(of: fixture.id, credentials: credentials, after: 5, limit: 100)
                return HTTPResponse(
                    status: 200, body: Array((events.isEmpty ? #"{"events":[],"next":5}"# : #"{"events":[{}],"next":6}"#).utf8))
            }
            answer = response.deferred
            #expect(answer?.isResolved == false)
            try fixture.navigate("help")
            Self.waitFor { answer?.isResolved == true }
            #expect(answer?.isResolved == true)
        }
        Self.waitFor { answer == nil }
        #expect(answer == nil, "the answered long poll is still held")
        #expect(!fixture.sessions.live.isWatched(fixture.id))
    }
}
