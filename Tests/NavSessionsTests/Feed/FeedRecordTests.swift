import Foundation
import NavCore
import NavJSON
import NavWire
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// Every applied change's feed record, as the service writes it (docs/design.md, "Navigation
/// analytics"): one per change, of the kind asked, with the stages before and after, and in the
/// analytics form no value of a context, a state patch, a command's arguments or a result.
@Suite struct FeedRecordTests {
    /// A service on a memory store whose records carry the attribute `user`.
    struct Fixture {
        let sessions: SessionService
        let clock = Locked(Int64(1_800_000_000_000))

        init(ttl: Int64 = 3_600_000, maxFeedBytes: Int = FeedSettings().maxBytes, heavyWork: Budget? = nil) throws {
            let graphs = try TestFixtures.graphs()
            var configuration = SessionService.Configuration(sessionTTL: ttl)
            configuration.feed = FeedSettings(attributes: ["user"], maxBytes: maxFeedBytes)
            configuration.heavyWork = heavyWork
            let clock = self.clock
            sessions = SessionService(
                store: MemoryStore(), graphs: graphs, configuration: configuration, now: { clock.withLock { $0 } })
        }

        func create(_ context: [String: JSONValue] = [:], start: String? = nil) throws -> (id: String, owner: Credentials) {
            let created = try sessions.create(graph: nil, start: start, context: context)
            return (created.session.id, Credentials(bearer: Token.digest(created.token)))
        }

        func advance(_ milliseconds: Int64) {
            clock.withLock { $0 += milliseconds }
        }

        @discardableResult
        func apply(_ intent: Intent, _ session: (id: String, owner: Credentials)) throws -> Int {
            advance(1)
            return try sessions.apply(.intent(intent), to: session.id, credentials: session.owner, ifMatch: nil) { $0.events.count }
        }

        /// Every record, in both forms, parsed.
        func records(_ form: FeedForm = .analytics) throws -> [JSONValue] {
            try sessions.feed(from: .oldest, limit: 1000, form: form).entries.map { try JSONValue(parsing: $0.json) }
        }

        /// Every record's bytes in the analytics form, as one text.
        func analyticsText() throws -> String {
            try sessions.feed(from: .oldest, limit: 1000, form: .analytics).entries.map { String(decoding: $0.json, as: UTF8.self) }
                .joined(separator: "\n")
        }
    }

    @Test func creationIsTheFirstRecordWithTheStageAndNoFrom() throws {
        let fixture = try Fixture()
        let session = try fixture.create(["user": "u1", "secret": "hunter2"])
        let records = try fixture.records()
        try #require(records.count == 1)
        let record = records[0]
        #expect(record["id"]?.stringValue == session.id + ":1")
        #expect(record["form"]?.stringValue == "analytics")
        #expect(record["kind"]?.stringValue == "create")
        #expect(record["version"]?.intValue == 1)
        #expect(record["schema"]?.intValue == 1)
        #expect(record["graph"]?["name"]?.stringValue == "news")
        #expect(record["from"] == nil)
        #expect(record["to"]?["path"]?.stringValue == "/top")
        #expect(record["to"]?["screen"]?["scene"]?.stringValue == "top")
        #expect(record["added"] == ["top"])
        #expect(record["events"]?.arrayValue?.first?.stringValue == "transitionStart")
        #expect(record["attributes"] == ["user": "u1"])
        #expect(record["intent"]?["create"]?["context"] == ["keys": ["secret", "user"]])
        #expect(record["time"]?.stringValue == "2027-01-15T08:00:00.000Z")
        let full = try #require(try fixture.records(.full).first)
        #expect(full["form"]?.stringValue == "full")
        #expect(full["intent"]?["create"]?["context"] == ["secret": "hunter2", "user": "u1"])
    }

    @Test func aNavigationRecordsFromToAddedAndRemoved() throws {
        let fixture = try Fixture()
        let session = try fixture.create()
        try fixture.apply(.navigate("list_news/show_news(id=44)"), session)
        try fixture.apply(.navigate("^/top!/list_coupon"), session)
        let records = try fixture.records()
        try #require(records.count == 3)
        let second = records[1]
        #expect(second["id"]?.stringValue == session.id + ":2")
        #expect(second["kind"]?.stringValue == "navigate")
        #expect(second["intent"] == ["navigate": "list_news/show_news(id=44)"])
        #expect(second["from"]?["path"]?.stringValue == "/top")
        #expect(second["to"]?["path"]?.stringValue == "/top/list_news(category=0)/show_news(id=44)")
        #expect(second["to"]?["screen"]?["params"] == ["id": 44])
        #expect(second["added"] == ["list_news", "show_news"])
        #expect(second["removed"] == [])
        #expect(records[2]["removed"] == ["list_news", "show_news"])
        #expect(records[2]["added"] == ["list_coupon"])
    }

    /// A tab switch moves the tab left into a saved stack and brings the other back: neither
    /// counts as added or removed, only the screen made for the first time.
    @Test func screensMovedToAndFromSavedTabsAreNeitherAddedNorRemoved() throws {
        let fixture = try Fixture()
        let session = try fixture.create(["user": "u1"], start: "/top/home#friend")
        try fixture.apply(.navigate("^/top/home#profile"), session)
        try fixture.apply(.navigate("^/top/home#friend"), session)
        let records = try fixture.records()
        try #require(records.count == 3)
        #expect(records[0]["added"] == ["top", "home", "friend"])
        #expect(records[1]["added"] == ["profile"])
        #expect(records[1]["removed"] == [])
        #expect(records[2]["added"] == [])
        #expect(records[2]["removed"] == [])
        #expect(records[2]["to"]?["screen"]?["scene"]?.stringValue == "friend")
    }

    /// A redirect keeps the kind asked and names the first target refused; the context change
    /// that lets it through is `context` with `resumed`.
    @Test func aRedirectAndItsResumeAreToldApart() throws {
        let fixture = try Fixture()
        let session = try fixture.create()
        try fixture.apply(.navigate("settings"), session)
        try fixture.apply(.patchContext(["user": "u1"]), session)
        let records = try fixture.records()
        try #require(records.count == 3)
        #expect(records[1]["kind"]?.stringValue == "navigate")
        #expect(records[1]["redirected"]?.stringValue == "/top/settings")
        #expect(records[1]["to"]?["screen"]?["scene"]?.stringValue == "login")
        #expect(records[2]["kind"]?.stringValue == "context")
        #expect(records[2]["resumed"] == true)
        #expect(records[2]["redirected"] == nil)
        #expect(records[2]["to"]?["path"]?.stringValue == "/top/settings")
        #expect(records[2]["intent"] == ["context": ["keys": ["user"]]])
        #expect(records[2]["attributes"] == ["user": "u1"])
    }

    /// No value a client sends leaves navd in the analytics form: not in a context (at creation
    /// or patched), a state patch, a command's arguments, a result, nor inside a batch.
    @Test func theAnalyticsFormCarriesKeysNeverValues() throws {
        let fixture = try Fixture()
        let secret = "s3cret-value-\(UUID().uuidString)"
        let session = try fixture.create(["token": .string(secret), "user": "u1"], start: "/top/profile")
        try fixture.apply(.patchContext(["card": .string(secret)]), session)
        try fixture.apply(.navigate("edit_profile"), session)
        let form = try #require(try fixture.sessions.store.load(session.id)?.state.top?.id)
        try fixture.apply(.command(screen: form, name: "type", args: ["text": .string(secret)]), session)
        try fixture.apply(.patchState(screen: form, patch: ["note": .string(secret)]), session)
        try fixture.apply(.command(screen: form, name: "save"), session)
        try fixture.apply(.navigate("edit_profile"), session)
        try fixture.apply(.exit(result: .string(secret)), session)
        try fixture.apply(.navigate("edit_profile"), session)
        try fixture.apply(.back(1, result: ["value": .string(secret)]), session)
        try fixture.apply(.batch([.patchContext(["more": .string(secret)]), .navigate("^/top")]), session)
        let analytics = try fixture.analyticsText()
        #expect(!analytics.contains(secret))
        let full = try fixture.sessions.feed(from: .oldest, limit: 1000, form: .full).entries
            .map { String(decoding: $0.json, as: UTF8.self) }.joined()
        #expect(full.contains(secret), "the full form keeps every value")
        let records = try fixture.records()
        let kinds = records.compactMap { $0["kind"]?.stringValue }
        #expect(kinds == ["create", "context", "navigate", "command", "state", "command", "navigate", "exit", "navigate", "back", "batch"])
        #expect(records[3]["intent"]?["command"] == ["screen": .string(form), "name": "type", "keys": ["text"]])
        #expect(records[4]["intent"]?["state"] == ["screen": .string(form), "keys": ["note"]])
        #expect(records[7]["intent"] == ["exit": ["result": true]])
        #expect(records[9]["intent"] == ["back": 1, "result": true])
        #expect(records[10]["intent"] == ["intents": [["context": ["keys": ["more"]]], ["navigate": "^/top"]]])
    }

    /// A page of the feed or of a history holds at most about a mebibyte of records, whatever its
    /// `limit`: an answer a client leaves unread holds that, not a thousand records of the size
    /// clients made them. Paging on with `next` still reads every record once.
    @Test func aPageEndsAtItsBytesAndPagingOnReadsEveryRecordOnce() throws {
        let fixture = try Fixture()
        let session = try fixture.create(["user": "u1"], start: "/top/profile")
        try fixture.apply(.navigate("edit_profile"), session)
        let form = try #require(try fixture.sessions.store.load(session.id)?.state.top?.id)
        for index in 0..<40 {
            let note = String(repeating: String(index % 10), count: 60_000)
            try fixture.apply(.patchState(screen: form, patch: ["note": .string(note)]), session)
        }
        var start = FeedStart.oldest
        var ids: [String] = []
        var pages = 0
        while true {
            let page = try fixture.sessions.feed(from: start, limit: 1000, form: .full)
            if page.entries.isEmpty { break }
            pages += 1
            let bytes = page.entries.reduce(0) { $0 + $1.members.count }
            #expect(bytes <= FeedPage.maxBytes || page.entries.count == 1, "\(page.entries.count) records, \(bytes) bytes")
            #expect(page.next == page.entries.last?.cursor)
            ids += page.entries.map(\.id)
            start = .after(page.next)
        }
        #expect(ids == (1...42).map { "\(session.id):\($0)" })
        #expect(pages >= 3)
        var versions: [Int] = []
        var after = 0
        while true {
            let page = try fixture.sessions.history(of: session.id, credentials: session.owner, after: after, limit: 1000)
            if page.entries.isEmpty { break }
            #expect(page.entries.reduce(0) { $0 + $1.members.count } <= FeedPage.maxBytes)
            versions += page.entries.map(\.version)
            after = page.next
        }
        #expect(versions == Array(1...42))
    }

    /// A kept record holds about its own bytes, which is what the feed's budget counts
    /// (`--max-feed-bytes`): a record of a large state patch is not kept in a buffer grown to
    /// twice its size, nor is its analytics form kept in one sized for the patch.
    @Test func aKeptRecordHoldsAboutItsOwnBytes() throws {
        let fixture = try Fixture()
        let session = try fixture.create(["user": "u1"], start: "/top/profile")
        try fixture.apply(.navigate("edit_profile"), session)
        let form = try #require(try fixture.sessions.store.load(session.id)?.state.top?.id)
        try fixture.apply(.patchState(screen: form, patch: ["note": .string(String(repeating: "n", count: 60_000))]), session)
        for form in [FeedForm.full, .analytics] {
            let kept = try #require(try fixture.sessions.feed(from: .oldest, limit: 1000, form: form).entries.last).members
            #expect(kept.capacity <= kept.count + max(256, kept.count / 8), "\(form): \(kept.count) bytes in \(kept.capacity)")
        }
    }

    /// Refusals, no-ops and stale writes leave no record; each version has exactly one.
    /// Each event type is written as its name, quoted, whatever kinds are added later.
    @Test(arguments: LifecycleEvent.Kind.allCases)
    func anEventTypeIsWrittenAsItsName(kind: LifecycleEvent.Kind) {
        let quoted = FeedRecord.quoted(kind)
        let text = quoted.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        #expect(text == "\"\(kind.rawValue)\"")
    }

    @Test func onlyAppliedChangesAreRecorded() throws {
        let fixture = try Fixture()
        let session = try fixture.create()
        #expect(throws: ServiceError.self) { try fixture.apply(.navigate("^/nowhere"), session) }
        #expect(try fixture.apply(.navigate("^/top"), session) == 0, "a no-op")
        try fixture.apply(.navigate("list_news"), session)
        let ids = try fixture.records().compactMap { $0["id"]?.stringValue }
        #expect(ids == [session.id + ":1", session.id + ":2"])
    }

    /// A session's end is its last record: `<session>:end`, one version past its last change,
    /// deleted or expired.
    @Test func theEndIsRecordedOnDeleteAndOnExpiry() throws {
        let fixture = try Fixture(ttl: 10_000)
        let deleted = try fixture.create()
        try fixture.apply(.navigate("list_news"), deleted)
        try fixture.sessions.delete(deleted.id, credentials: deleted.owner, ifMatch: nil)
        let expiring = try fixture.create()
        fixture.advance(20_000)
        #expect(try fixture.sessions.sweep() == 1)
        let ends = try fixture.records().filter { $0["kind"]?.stringValue == "end" }
        try #require(ends.count == 2)
        #expect(ends[0]["id"]?.stringValue == deleted.id + ":end")
        #expect(ends[0]["version"]?.intValue == 3)
        #expect(ends[0]["reason"]?.stringValue == "deleted")
        #expect(ends[0]["from"]?["path"]?.stringValue == "/top/list_news(category=0)")
        #expect(ends[0]["to"] == ["path": nil, "screen": nil])
        #expect(ends[0]["removed"] == ["top", "list_news"])
        #expect(ends[1]["id"]?.stringValue == expiring.id + ":end")
        #expect(ends[1]["reason"]?.stringValue == "expired")
    }

    /// A reader that pages with `next` reads every record once; an empty page answers the
    /// `after` it was given; a cursor behind what the sweep removed is expired.
    @Test func pagingWithNextReadsEachRecordOnce() throws {
        let fixture = try Fixture()
        for _ in 0..<5 {
            let session = try fixture.create()
            try fixture.apply(.navigate("list_news"), session)
        }
        var seen: [String] = []
        var start = FeedStart.oldest
        while true {
            let page = try fixture.sessions.feed(from: start, limit: 3, form: .analytics)
            seen += page.entries.map(\.id)
            if page.entries.isEmpty {
                #expect(start == .after(page.next))
                break
            }
            start = .after(page.next)
        }
        #expect(seen.count == 10)
        #expect(Set(seen).count == 10)
        fixture.advance(8 * 24 * 3_600_000)
        _ = try fixture.sessions.sweep()
        #expect(throws: ServiceError.self) { try fixture.sessions.feed(from: .after(FeedCursor(position: 1)), limit: 10, form: .analytics) }
    }

    @Test func purgeBySessionAndByAttribute() throws {
        let fixture = try Fixture()
        let first = try fixture.create(["user": "u1"])
        try fixture.apply(.navigate("list_news"), first)
        _ = try fixture.create(["user": "u2"])
        let third = try fixture.create()
        #expect(try fixture.sessions.purgeFeed(.attribute("user", "u1")) == 2)
        #expect(try fixture.sessions.purgeFeed(.session(third.id)) == 1)
        let left = try fixture.records()
        #expect(left.count == 1)
        #expect(left.first?["attributes"] == ["user": "u2"])
    }

    @Test func cursorsReadBackAsWritten() {
        for cursor in [FeedCursor(position: 0), FeedCursor(position: 42), FeedCursor(transaction: 7, position: 3)] {
            #expect(FeedCursor(cursor.description) == cursor)
        }
        for text in ["", "-1", "01", "1.2.3", "x", "0.5", "99999999999999999999", ".1", "1."] {
            #expect(FeedCursor(text) == nil, "\(text)")
        }
    }
}
