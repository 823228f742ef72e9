import NavCore
import NavJSON
import NavWire

/// What a record says was asked (docs/design.md, "The record").
package enum FeedKind: String, Sendable, CaseIterable {
    case create, navigate, link, back, exit, params, state, command, context, batch, confirm, upgrade, end

    /// The kind of an intent as sent.
    package init(_ intent: Intent) {
        switch intent {
        case .navigate: self = .navigate
        case .link: self = .link
        case .exit: self = .exit
        case .back: self = .back
        case .setParams: self = .params
        case .patchState: self = .state
        case .patchContext: self = .context
        case .command: self = .command
        case .batch: self = .batch
        }
    }
}

/// Why a session ended.
package enum FeedEndReason: String, Sendable {
    case deleted, expired
}

/// What the daemon writes into each record, and how long it keeps them (`--feed-attribute`,
/// `--feed-retention`, `--max-feed-bytes`).
package struct FeedSettings: Sendable {
    /// The context keys whose values a record carries in `attributes`, sorted.
    package var attributes: [String]
    /// Records older than this many ms are swept.
    package var retention: Int64
    /// All records together take at most this many bytes (``FeedRecord/cost``): the oldest go first.
    package var maxBytes: Int

    package init(attributes: [String] = [], retention: Int64 = 7 * 24 * 3600 * 1000, maxBytes: Int = 256 << 20) {
        self.attributes = Array(Set(attributes)).sorted()
        self.retention = retention
        self.maxBytes = maxBytes
    }
}

extension FeedRecord {
    /// The record of one applied change.
    /// - Parameters:
    ///   - intent: the intent as sent, in the batch-item form (`{"confirm": item}` for a
    ///     confirmation, `{"create": …}`, `{"upgrade": …}`); nil on an end record.
    ///   - before: the stage before (nil on creation); `after`: the stage after (nil on an end).
    package init(
        session: String, graph: String, graphVersion: Int, time: Int64, kind: FeedKind, intent: JSONValue?, before: SessionState?,
        after: SessionState?, events: [LifecycleEvent], endReason: FeedEndReason? = nil, settings: FeedSettings
    ) {
        let version = after?.version ?? ((before?.version ?? 0) + 1)
        let context = after?.context ?? before?.context ?? [:]
        var attributes: [String: JSONValue] = [:]
        for key in settings.attributes { if let value = context[key] { attributes[key] = value } }
        var head = JSONWriter(reservingCapacity: 512)
        head.writeLiteral("\"time\":")
        head.writeLiteral("\"")
        head.writeRaw(bytes: Timestamp.bytes(milliseconds: time))
        head.writeLiteral("\"")
        head.writeLiteral(",\"schema\":")
        head.writeInt(Self.schema)
        head.writeLiteral(",\"session\":")
        head.writeString(session)
        head.writeLiteral(",\"graph\":{\"name\":")
        head.writeString(graph)
        head.writeLiteral(",\"version\":")
        head.writeInt(graphVersion)
        head.writeLiteral("},\"version\":")
        head.writeInt(version)
        head.writeLiteral(",\"kind\":")
        head.writeString(kind.rawValue)
        if let endReason {
            head.writeLiteral(",\"reason\":")
            head.writeString(endReason.rawValue)
        }
        if let before, let after, events.contains(where: { $0.type == .transitionStart }) {
            // A navigation that was not redirected clears `pending`; one that was leaves the
            // first target refused there. A context change that navigates resumed it.
            if kind == .context, before.pending != nil, after.pending == nil {
                head.writeLiteral(",\"resumed\":true")
            } else if let refused = after.pending, kind != .context || refused != before.pending {
                head.writeLiteral(",\"redirected\":")
                head.writeString(refused)
            }
        }
        var tail = JSONWriter(reservingCapacity: 512)
        if let before {
            tail.writeLiteral(",\"from\":")
            Self.writeStage(before, into: &tail)
        }
        tail.writeLiteral(",\"to\":")
        if let after { Self.writeStage(after, into: &tail) } else { tail.writeLiteral("{\"path\":null,\"screen\":null}") }
        let (added, removed) = Self.addedAndRemoved(before: before, after: after)
        tail.writeLiteral(",\"added\":")
        tail.write(.array(added.map(JSONValue.string)))
        tail.writeLiteral(",\"removed\":")
        tail.write(.array(removed.map(JSONValue.string)))
        tail.writeLiteral(",\"events\":[")
        for (index, event) in events.enumerated() {
            if index > 0 { tail.writeLiteral(",") }
            tail.writeString(event.type.rawValue)
        }
        tail.writeLiteral("],\"attributes\":")
        tail.write(.object(attributes))
        tail.writeLiteral("}")
        let tailBytes = tail.finish()
        let headBytes = head.finish()
        func form(_ intent: JSONValue?) -> [UInt8] {
            var writer = JSONWriter(reservingCapacity: headBytes.count + tailBytes.count + 128)
            writer.writeRaw(bytes: headBytes)
            writer.writeLiteral(",\"intent\":")
            writer.write(intent ?? .null)
            writer.writeRaw(bytes: tailBytes)
            return writer.finish()
        }
        self.init(
            session: session, version: version, isEnd: after == nil, graph: graph, time: time, attributes: attributes,
            full: form(intent), analytics: form(intent.map(Self.analyticsIntent))
        )
    }

    /// The record format's version (`schema`, and `dataschema` in a webhook's events).
    package static let schema = 1

    /// `{"path", "screen": {"id", "scene", "params"}}`: the stage's canonical path and its
    /// visible top (inside tabs, the selected tab's top: the last screen of the stage).
    static func writeStage(_ state: SessionState, into writer: inout JSONWriter) {
        writer.writeLiteral("{\"path\":")
        writer.writeString(state.pathText)
        writer.writeLiteral(",\"screen\":")
        guard let top = state.top else {
            writer.writeLiteral("null}")
            return
        }
        writer.writeLiteral("{\"id\":")
        writer.writeString(top.id)
        writer.writeLiteral(",\"scene\":")
        writer.writeString(top.scene)
        writer.writeLiteral(",\"params\":{")
        for (index, key) in top.params.keys.sorted().enumerated() {
            if index > 0 { writer.writeLiteral(",") }
            writer.writeString(key)
            writer.writeLiteral(":")
            if let value = top.params[key] { writer.write(value.json) }
        }
        writer.writeLiteral("}}}")
    }

    /// The scenes of the screens the change created and removed, by screen id, root to top. A
    /// screen moved into or out of a saved tab stack is neither.
    static func addedAndRemoved(before: SessionState?, after: SessionState?) -> (added: [String], removed: [String]) {
        let old = before?.allScreens ?? []
        let new = after?.allScreens ?? []
        let oldIDs = Set(old.map(\.id))
        let newIDs = Set(new.map(\.id))
        return (new.filter { !oldIDs.contains($0.id) }.map(\.scene), old.filter { !newIDs.contains($0.id) }.map(\.scene))
    }

    /// An intent in the analytics form: every member that carries a client's values (a context
    /// or state patch, a command's arguments, a create's context) as its top-level keys, and a
    /// result as `true`. Paths, link and screen params, names and versions stay: they are the
    /// navigation.
    package static func analyticsIntent(_ intent: JSONValue) -> JSONValue {
        guard var members = intent.objectValue else { return intent }
        func keys(_ value: JSONValue?) -> JSONValue {
            .array((value?.objectValue?.keys.sorted() ?? []).map(JSONValue.string))
        }
        if members["result"] != nil { members["result"] = true }
        if var exit = members["exit"]?.objectValue, exit["result"] != nil {
            exit["result"] = true
            members["exit"] = .object(exit)
        }
        if let state = members["state"]?.objectValue {
            members["state"] = ["screen": state["screen"] ?? .null, "keys": keys(state["patch"])]
        }
        if var command = members["command"]?.objectValue {
            command["keys"] = keys(command["args"])
            command["args"] = nil
            members["command"] = .object(command)
        }
        if let context = members["context"] {
            members["context"] = ["keys": keys(context)]
        }
        if let items = members["intents"]?.arrayValue {
            members["intents"] = .array(items.map(analyticsIntent))
        }
        if let item = members["confirm"] {
            members["confirm"] = analyticsIntent(item)
        }
        if var create = members["create"]?.objectValue {
            create["context"] = ["keys": keys(create["context"])]
            members["create"] = .object(create)
        }
        return .object(members)
    }
}
