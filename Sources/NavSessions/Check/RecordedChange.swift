import NavCore
import NavJSON
import NavWire

/// One change as its feed record tells it (docs/design.md, "The record"): what the replay of a
/// session's history (``SessionService/pastSession(_:at:)``) and `navd check`
/// (``JourneyCheck``) hand to ``SessionService/step(_:to:)`` again, and what the change answered.
package struct RecordedChange: Sendable {
    /// What was asked, as the service applies it.
    package enum Step: Sendable {
        case create(start: String?, context: [String: JSONValue])
        /// An intent; `confirmed` for a confirmation, which carries out the intent its token named.
        case intent(Intent, confirmed: Bool)
        /// An upgrade to this graph version.
        case upgrade(version: Int)
        case end
    }

    /// Why a record could not be read.
    package struct Unreadable: Error, Sendable, CustomStringConvertible {
        package var description: String
        /// The session it names, when that much could be read.
        package var session: String?
    }

    package var session: String
    package var version: Int
    /// The full form; an analytics record's intent lacks the values a replay needs.
    package var isFull: Bool
    package var graphName: String
    /// The graph version the session ran on after the change.
    package var graphVersion: Int
    /// What was asked; nil in the analytics form.
    package var step: Step?
    /// `kind`, as written.
    package var kind: String
    /// The canonical path after the change (`to.path`); nil after an end.
    package var path: String?
    /// The change's event types, in order.
    package var events: [String]

    /// A whole record as the feed, `navd feed` and a webhook's `data` have it.
    package init(record: JSONValue) throws(Unreadable) {
        let form = record["form"]?.stringValue
        guard form == "full" || form == "analytics" else {
            throw Unreadable(description: "no 'form' of 'full' or 'analytics'", session: record["session"]?.stringValue)
        }
        try self.init(members: record, full: form == "full")
    }

    /// A stored entry of the full form (nil for another form, or an entry that cannot be read).
    package init?(_ entry: FeedEntry) {
        guard entry.form == .full, let record = try? JSONValue(parsing: [UInt8(ascii: "{")] + entry.members) else { return nil }
        try? self.init(members: record, full: true)
    }

    private init(members record: JSONValue, full: Bool) throws(Unreadable) {
        let session = record["session"]?.stringValue
        func fail(_ what: String) -> Unreadable { Unreadable(description: what, session: session) }
        guard let session, !session.isEmpty else { throw fail("no 'session'") }
        guard let version = record["version"]?.intValue else { throw fail("no 'version'") }
        guard let name = record["graph"]?["name"]?.stringValue, let graphVersion = record["graph"]?["version"]?.intValue else {
            throw fail("no 'graph' with 'name' and 'version'")
        }
        guard let kind = record["kind"]?.stringValue else { throw fail("no 'kind'") }
        guard let events = record["events"]?.arrayValue else { throw fail("no 'events'") }
        self.session = session
        self.version = version
        self.isFull = full
        self.graphName = name
        self.graphVersion = graphVersion
        self.kind = kind
        self.path = record["to"]?["path"]?.stringValue
        self.events = []
        self.events.reserveCapacity(events.count)
        for event in events {
            guard let type = event.stringValue else { throw fail("an event type that is not a string") }
            self.events.append(type)
        }
        guard full else { return }
        do {
            step = try Self.step(of: record["intent"], kind: kind)
        } catch {
            throw fail("its 'intent' cannot be read: \(error.message)")
        }
        if case .end = step {
        } else if path == nil {
            throw fail("no 'to' with a 'path'")
        }
    }

    /// The step a full-form `intent` member names.
    private static func step(of intent: JSONValue?, kind: String) throws(NavError) -> Step {
        if kind == "end" { return .end }
        guard let intent = intent?.objectValue else { throw NavError(.invalidRequest, "not an object") }
        if let create = intent["create"] {
            guard let context = create["context"]?.objectValue else { throw NavError(.invalidRequest, "a creation without a context") }
            return .create(start: create["start"]?.stringValue, context: context)
        }
        if let upgrade = intent["upgrade"] {
            guard let version = upgrade["version"]?.intValue else { throw NavError(.invalidRequest, "an upgrade without a version") }
            return .upgrade(version: version)
        }
        if let confirmed = intent["confirm"] { return .intent(try Intent(confirmed: confirmed), confirmed: true) }
        return .intent(try Intent(confirmed: .object(intent)), confirmed: false)
    }
}
