import NavCore
import NavJSON
import NavWire

/// One applied change of a session, as the analytics feed and the session's history keep it
/// (docs/design.md, "Navigation analytics"): written by the store in the same write as the
/// change, so an acknowledged change has its record and a refused one has none.
///
/// A record is kept in both of its forms, each as the JSON members that follow the record's
/// `id`, `cursor` and `form` (which a reader writes in front: ``FeedEntry/json(form:)``):
/// `analytics`, what leaves navd for analytics pipelines (context keys, never their values, but
/// for the configured attributes), and `full`, every value, the session's own data.
package struct FeedRecord: Sendable, Equatable {
    package var session: String
    /// The session's version after the change; for the end record, the last version plus one.
    package var version: Int
    /// Whether this is the session's end record (`id` `<session>:end`).
    package var isEnd: Bool
    package var graph: String
    /// When the change was applied, in ms since the epoch.
    package var time: Int64
    /// The values of the configured attribute keys the session's context held (`--feed-attribute`):
    /// what a purge by attribute finds the record by.
    package var attributes: [String: JSONValue]
    /// `"time":…,…}`: the members after `id`, `cursor` and `form`, in the full form.
    package var full: [UInt8]
    /// The same in the analytics form.
    package var analytics: [UInt8]
    /// The scene of the visible top after the change when the record is a *view* (its `to`
    /// screen is another screen than its `from` one, a creation included); nil otherwise.
    /// Traffic and funnels count these (docs/design.md, "Traffic and funnels").
    package var toScene: String?
    /// The scene of the visible top before a view (nil for a creation, and for every record that
    /// is not a view): with ``toScene``, an edge of the traffic.
    package var fromScene: String?

    package init(
        session: String, version: Int, isEnd: Bool, graph: String, time: Int64, attributes: [String: JSONValue], full: [UInt8],
        analytics: [UInt8], fromScene: String? = nil, toScene: String? = nil
    ) {
        self.session = session
        self.version = version
        self.isEnd = isEnd
        self.graph = graph
        self.time = time
        self.attributes = attributes
        self.full = full
        self.analytics = analytics
        self.fromScene = toScene == nil ? nil : fromScene
        self.toScene = toScene
    }

    /// The view a stage change is: the scenes of the visible tops before and after when the top
    /// after is another screen than the one before (a creation: no `before`); nil when it is not
    /// a view (a change of params, state or context, an end). The tops are read in place.
    package static func view(before: [Screen]?, after: [Screen]?) -> (from: String?, to: String)? {
        guard let after, let to = after.indices.last else { return nil }
        let from = before?.indices.last
        guard let before, let from else { return (nil, after[to].scene) }
        return after[to].id == before[from].id ? nil : (before[from].scene, after[to].scene)
    }

    /// ``toScene`` and ``fromScene`` read back from the full form's `from` and `to` screens, for
    /// a record kept before they were kept beside it (a change log written by an older navd).
    package static func view(fromFull full: [UInt8]) -> (from: String?, to: String)? {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.append(contentsOf: full)
        guard let members = (try? JSONValue(parsing: bytes))?.objectValue else { return nil }
        func screen(_ key: String) -> (id: String, scene: String)? {
            guard let screen = members[key]?.objectValue?["screen"]?.objectValue, let id = screen["id"]?.stringValue,
                let scene = screen["scene"]?.stringValue
            else { return nil }
            return (id, scene)
        }
        guard let to = screen("to") else { return nil }
        let from = screen("from")
        guard from?.id != to.id else { return nil }
        return (from?.scene, to.scene)
    }

    /// `<session>:<version>`, or `<session>:end`: stable, the key every consumer deduplicates by.
    package var id: String { Self.id(session: session, version: version, isEnd: isEnd) }

    package static func id(session: String, version: Int, isEnd: Bool) -> String {
        isEnd ? session + ":end" : String(session + ":", decimal: UInt64(max(0, version)))
    }

    /// About the bytes the record takes where it is kept: its forms (one, when they are the same
    /// bytes), and its keys.
    package var cost: Int { 96 + full.count + analyticsIfDifferent.count + session.utf8.count * 2 + graph.utf8.count }

    /// The analytics form, or no bytes when it is the full form's (an intent that carries no
    /// values: most navigations): what a store writes, so it keeps such a record once. A record
    /// is never empty, so empty bytes read back as "the full form".
    package var analyticsIfDifferent: [UInt8] { analytics == full ? [] : analytics }

    /// The attributes as a JSON object's bytes, as stores keep them beside the record (most
    /// records have none: `{}`, not encoded each time).
    package var attributesJSON: [UInt8] { attributes.isEmpty ? Self.noAttributes : JSONValue.object(attributes).jsonBytes }

    private static let noAttributes: [UInt8] = Array("{}".utf8)
}

/// Which form of a record a reader wants.
package enum FeedForm: String, Sendable {
    case analytics, full
}

/// Where a record sits in the feed: records are read in cursor order. A store of one process
/// numbers its records (`position`, with `transaction` 0); PostgreSQL orders them by the
/// transaction that wrote them, then by position (docs/design.md, "Reading the feed").
package struct FeedCursor: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var transaction: UInt64
    package var position: Int64

    package init(transaction: UInt64 = 0, position: Int64) {
        self.transaction = transaction
        self.position = position
    }

    /// Before every record.
    package static let start = FeedCursor(position: 0)

    package static func < (a: FeedCursor, b: FeedCursor) -> Bool {
        (a.transaction, a.position) < (b.transaction, b.position)
    }

    /// `position`, or `transaction.position`: opaque to clients, which only pass it back.
    package var description: String {
        transaction == 0 ? String(position) : String(transaction) + "." + String(position)
    }

    /// Reads ``description``; nil for any other text.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.count >= 1, parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 19 }) else { return nil }
        guard let position = DecimalDigits.parse(parts[parts.count - 1].utf8, leadingZeros: false)
        else { return nil }
        if parts.count == 2 {
            guard let transaction = DecimalDigits.parse(parts[0].utf8, leadingZeros: false), transaction > 0 else { return nil }
            self.init(transaction: UInt64(transaction), position: Int64(position))
        } else {
            self.init(position: Int64(position))
        }
    }
}

/// A record as a store reads it back, in one form.
package struct FeedEntry: Sendable {
    package var cursor: FeedCursor
    package var session: String
    package var version: Int
    package var isEnd: Bool
    package var time: Int64
    /// The members after `id`, `cursor` and `form`, in ``form``.
    package var members: [UInt8]
    package var form: FeedForm

    package init(cursor: FeedCursor, session: String, version: Int, isEnd: Bool, time: Int64, members: [UInt8], form: FeedForm) {
        self.cursor = cursor
        self.session = session
        self.version = version
        self.isEnd = isEnd
        self.time = time
        self.members = members
        self.form = form
    }

    package var id: String { FeedRecord.id(session: session, version: version, isEnd: isEnd) }

    /// The whole record: `{"id":…,"cursor":…,"form":…,` and its members.
    package func write(into writer: inout JSONWriter) {
        writer.writeLiteral("{\"id\":")
        writer.writeString(id)
        writer.writeLiteral(",\"cursor\":")
        writer.writeString(cursor.description)
        writer.writeLiteral(",\"form\":")
        writer.writeString(form.rawValue)
        writer.writeLiteral(",")
        writer.writeRaw(bytes: members)
    }

    package var json: [UInt8] {
        var writer = JSONWriter(reservingCapacity: members.count + 96)
        write(into: &writer)
        return writer.finish()
    }
}

/// A page of the feed: its records and the cursor to read on from.
package struct FeedPage: Sendable {
    package var entries: [FeedEntry]
    /// After the last record returned; the `after` given when there is none (or, without one,
    /// where the next record will be).
    package var next: FeedCursor
    /// The page ended at ``maxBytes`` before its `limit`: more records may follow at once.
    package var cut = false

    package init(entries: [FeedEntry], next: FeedCursor) {
        self.entries = entries
        self.next = next
    }

    /// The most bytes of records one answer holds, a feed page's or a history's: it ends before
    /// the record that would take it past this, however many its `limit` allowed (but it always
    /// holds one), so an answer a client leaves unread holds about a mebibyte, not `limit`
    /// records of whatever size clients made them.
    package static let maxBytes = 1 << 20

    /// How many of `entries`, from the first, an answer holds (``maxBytes``).
    package static func count(within entries: [FeedEntry]) -> Int {
        var bytes = 0
        for (index, entry) in entries.enumerated() {
            bytes += entry.members.count
            if bytes > maxBytes { return max(1, index) }
        }
        return entries.count
    }

    /// The page ended within ``maxBytes``, its `next` after its last record.
    package func capped() -> FeedPage {
        let count = Self.count(within: entries)
        guard count < entries.count else { return self }
        var page = FeedPage(entries: Array(entries.prefix(count)), next: entries[count - 1].cursor)
        page.cut = true
        return page
    }
}

/// Where a read of the feed starts.
package enum FeedStart: Sendable, Equatable {
    /// From the oldest retained record.
    case oldest
    /// After this cursor (exclusive).
    case after(FeedCursor)
    /// From the first record at or after this time (ms since the epoch) among those after the
    /// cursor: where a reader that asked for a time starts, and goes on from while it has had no
    /// record yet (records written meanwhile may still be older than that time).
    case since(Int64, after: FeedCursor = .start)

    /// Where a reader that read a page from here goes on: after the page's `next`, and still from
    /// this start's time while the reader has had no record.
    package func continuing(after page: FeedPage) -> FeedStart {
        if page.entries.isEmpty, case .since(let time, _) = self { return .since(time, after: page.next) }
        return .after(page.next)
    }

    /// The cursor this start reads after, if it names one.
    package var cursor: FeedCursor? {
        switch self {
        case .oldest: nil
        case .after(let cursor): cursor
        case .since(_, let cursor): cursor == .start ? nil : cursor
        }
    }
}

/// Which records a purge removes (`POST /v1/feed/purge`).
package enum FeedPurge: Sendable, Equatable {
    case session(String)
    /// Records whose attribute `key` had this value.
    case attribute(String, JSONValue)

    /// Whether `record` is one of those.
    package func matches(session: String, attributes: [String: JSONValue]) -> Bool {
        switch self {
        case .session(let id): session == id
        case .attribute(let key, let value): attributes[key] == value
        }
    }
}
