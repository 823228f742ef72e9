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

    /// The most bytes of checkpoints (``CheckpointStore``, ``HistoryCheckpoints``) kept beside a
    /// feed of at most `feedBytes`, in the store and in a process's memory alike.
    package static func checkpointBytes(forFeedBytes feedBytes: Int) -> Int { feedBytes / 8 }
}

/// The intent a record tells, as the service has it: written into the record in the batch-item
/// form, and reduced to keys for the analytics form only when it carries a client's values.
package enum FeedIntent: Sendable {
    case intent(Intent)
    /// A confirmation, and the intent its token named.
    case confirm(Intent)
    case create(graph: String, start: String?, context: [String: JSONValue])
    /// An upgrade, to this version (resolved).
    case upgrade(version: Int)

    /// The intent's JSON in the batch-item form.
    var json: JSONValue {
        switch self {
        case .intent(let intent): intent.wireJSON
        case .confirm(let intent): ["confirm": intent.wireJSON]
        case .create(let graph, let start, let context):
            ["create": ["graph": .string(graph), "start": start.map(JSONValue.string) ?? .null, "context": .object(context)]]
        case .upgrade(let version): ["upgrade": ["version": .int(version)]]
        }
    }

    /// Whether the analytics form differs from the full one: the intent carries a context, a
    /// state patch, a command (its arguments, even none: the form lists their keys) or a result.
    var carriesValues: Bool {
        switch self {
        case .intent(let intent), .confirm(let intent): Self.carriesValues(intent)
        case .create: true
        case .upgrade: false
        }
    }

    private static func carriesValues(_ intent: Intent) -> Bool {
        switch intent {
        case .navigate, .link, .setParams: false
        case .exit(let result), .back(_, let result): result != nil
        case .patchState, .patchContext, .command: true
        case .batch(let items): items.contains(where: carriesValues)
        }
    }

    /// Writes the full form: the common intents directly, the rest through their JSON value.
    func write(into writer: inout JSONWriter) {
        switch self {
        case .intent(.navigate(let path)):
            writer.writeLiteral("{\"navigate\":")
            writer.writeString(path)
            writer.writeLiteral("}")
        case .intent(.link(let name, let params)) where params.isEmpty:
            writer.writeLiteral("{\"link\":")
            writer.writeString(name)
            writer.writeLiteral("}")
        default:
            writer.write(json)
        }
    }
}

extension FeedRecord {
    /// The record of one applied change. A function, not an initializer: its parameters are
    /// borrowed, where an initializer's are handed over, and two whole stages copied in and
    /// destroyed cost ~1,500 instructions a record.
    /// - Parameters:
    ///   - intent: what was asked; nil on an end record.
    ///   - before: the stage before (nil on creation); `after`: the stage after (nil on an end).
    package static func make(
        session: String, graph: String, graphVersion: Int, time: Int64, kind: FeedKind, intent: FeedIntent?, before: SessionState?,
        after: SessionState?, events: [LifecycleEvent], endReason: FeedEndReason? = nil, settings: FeedSettings
    ) -> FeedRecord {
        // What is read of the two states, read once: optional chains on a whole state copy it
        // (retaining its every member) and destroy the copy; reading once saved ~800 instructions.
        let (beforeScreens, afterScreens) = (before?.screens, after?.screens)
        let (beforePending, afterPending) = (before?.pending, after?.pending)
        let version = after?.version ?? ((before?.version ?? 0) + 1)
        var attributes: [String: JSONValue] = [:]
        if !settings.attributes.isEmpty {
            let context = after?.context ?? before?.context ?? [:]
            for key in settings.attributes { if let value = context[key] { attributes[key] = value } }
        }
        // One buffer for the full form; the analytics form, when it differs (the intent carries a
        // client's values), is the same bytes with the intent reduced.
        var writer = JSONWriter(reservingCapacity: 768)
        writer.writeLiteral("\"time\":")
        writer.writeTimestamp(milliseconds: time)
        writer.writeLiteral(",\"schema\":")
        writer.writeInt(Self.schema)
        writer.writeLiteral(",\"session\":")
        writer.writeString(session)
        writer.writeLiteral(",\"graph\":{\"name\":")
        writer.writeString(graph)
        writer.writeLiteral(",\"version\":")
        writer.writeInt(graphVersion)
        writer.writeLiteral("},\"version\":")
        writer.writeInt(version)
        writer.writeLiteral(",\"kind\":")
        writer.writeString(kind.rawValue)
        if let endReason {
            writer.writeLiteral(",\"reason\":")
            writer.writeString(endReason.rawValue)
        }
        // The states are read member by member (a stage's screens, its top by index) rather than
        // bound whole and their tops copied: 15% fewer instructions a record.
        if beforeScreens != nil, afterScreens != nil, events.contains(where: { $0.type == .transitionStart }) {
            // A navigation that was not redirected clears `pending`; one that was leaves the
            // first target refused there. A context change that navigates resumed it.
            if kind == .context, beforePending != nil, afterPending == nil {
                writer.writeLiteral(",\"resumed\":true")
            } else if let refused = afterPending, kind != .context || refused != beforePending {
                writer.writeLiteral(",\"redirected\":")
                writer.writeString(refused)
            }
        }
        writer.writeLiteral(",\"intent\":")
        let intentStart = writer.writtenCount
        if let intent { intent.write(into: &writer) } else { writer.writeLiteral("null") }
        let intentEnd = writer.writtenCount
        if let beforeScreens {
            writer.writeLiteral(",\"from\":")
            Self.writeStage(path: before?.pathText, screens: beforeScreens, into: &writer)
        }
        writer.writeLiteral(",\"to\":")
        Self.writeStage(path: after?.pathText, screens: afterScreens, into: &writer)
        Self.writeAddedAndRemoved(before: beforeScreens, after: afterScreens, counter: before?.screenCounter, into: &writer)
        writer.writeLiteral(",\"events\":[")
        for index in events.indices {
            if index > 0 { writer.writeLiteral(",") }
            writer.writeLiteral(Self.quoted(events[index].type))
        }
        writer.writeLiteral("],\"attributes\":")
        if attributes.isEmpty { writer.writeLiteral("{}") } else { writer.write(.object(attributes)) }
        writer.writeLiteral("}")
        // Kept until folded (SQLite) or for the retention (memory), and counted by their bytes
        // (``cost``): a record of a large state patch must not hold twice its size.
        let full = writer.finishFitted()
        var analytics = full
        if let intent, intent.carriesValues {
            // The reduced intent (keys only) is usually far smaller than the one sent.
            var reduced = JSONWriter(reservingCapacity: full.count - (intentEnd - intentStart) + 256)
            reduced.writeRaw(bytes: Array(full[..<intentStart]))
            reduced.write(Self.analyticsIntent(intent.json))
            reduced.writeRaw(bytes: Array(full[intentEnd...]))
            analytics = reduced.finishFitted()
        }
        let view = Self.view(before: beforeScreens, after: afterScreens)
        return FeedRecord(
            session: session, version: version, isEnd: after == nil, graph: graph, time: time, attributes: attributes, full: full,
            analytics: analytics, fromScene: view?.from, toScene: view?.to)
    }

    /// An event's type as a JSON string: its name, which needs no escape, written as a literal.
    static func quoted(_ kind: LifecycleEvent.Kind) -> StaticString {
        switch kind {
        case .transitionStart: "\"transitionStart\""
        case .awake: "\"awake\""
        case .willAppear: "\"willAppear\""
        case .didAppear: "\"didAppear\""
        case .willDisappear: "\"willDisappear\""
        case .didDisappear: "\"didDisappear\""
        case .remove: "\"remove\""
        case .transitionEnd: "\"transitionEnd\""
        case .paramsChanged: "\"paramsChanged\""
        case .stateChanged: "\"stateChanged\""
        case .contextChanged: "\"contextChanged\""
        case .result: "\"result\""
        case .graphChanged: "\"graphChanged\""
        }
    }

    /// The record format's version (`schema`, and `dataschema` in a webhook's events).
    package static let schema = 1

    /// `{"path", "screen": {"id", "scene", "params"}}`: the stage's canonical path and its
    /// visible top (inside tabs, the selected tab's top: the last screen of the stage); both null
    /// when there is no stage (after an end). The top is read in place, not copied.
    /// - Parameters: the stage's ``SessionState/pathText`` and screens; nil, nil for no stage.
    static func writeStage(path: String?, screens: [Screen]?, into writer: inout JSONWriter) {
        guard let path, let screens else {
            writer.writeLiteral("{\"path\":null,\"screen\":null}")
            return
        }
        writer.writeLiteral("{\"path\":")
        writer.writeString(path)
        writer.writeLiteral(",\"screen\":")
        guard let top = screens.indices.last else {
            writer.writeLiteral("null}")
            return
        }
        writer.writeLiteral("{\"id\":")
        writer.writeString(screens[top].id)
        writer.writeLiteral(",\"scene\":")
        writer.writeString(screens[top].scene)
        writer.writeLiteral(",\"params\":{")
        // Kept sorted by key.
        var first = true
        for (key, value) in screens[top].params {
            if !first { writer.writeLiteral(",") }
            first = false
            writer.writeString(key)
            writer.writeLiteral(":")
            writer.write(value.json)
        }
        writer.writeLiteral("}}}")
    }

    /// `,"added":[…],"removed":[…]`: the scenes of the screens the change created and removed,
    /// by screen id, root to top. A screen moved into or out of a saved tab stack is neither.
    ///
    /// Screen ids come from the session's counter (`e1`, `e2`, …), so a screen created by the
    /// change is one numbered above the counter before it; a removed one is one of before whose
    /// number is not among after's. Nothing is copied: the stages are walked in place.
    /// - Parameters: the stages before (nil on a creation) and after (nil on an end), and the
    ///   screen counter before.
    static func writeAddedAndRemoved(before: [Screen]?, after: [Screen]?, counter: Int?, into writer: inout JSONWriter) {
        if let before, let after, !hasSavedTabs(before), !hasSavedTabs(after) {
            writeStageDifference(before, after, into: &writer)
            return
        }
        var afterNumbers: [Int] = []
        if let after { forEachScreen(after) { afterNumbers.append(number(of: $0.id)) } }
        let counter = counter ?? 0
        writer.writeLiteral(",\"added\":[")
        var first = true
        if let after {
            forEachScreen(after) { screen in
                guard before == nil || number(of: screen.id) > counter else { return }
                if !first { writer.writeLiteral(",") }
                first = false
                writer.writeString(screen.scene)
            }
        }
        writer.writeLiteral("],\"removed\":[")
        first = true
        if let before {
            forEachScreen(before) { screen in
                guard !afterNumbers.contains(number(of: screen.id)) else { return }
                if !first { writer.writeLiteral(",") }
                first = false
                writer.writeString(screen.scene)
            }
        }
        writer.writeLiteral("]")
    }

    /// Whether a stage holds a saved tab stack (then screens may move between the stage and it).
    private static func hasSavedTabs(_ screens: [Screen]) -> Bool {
        screens.indices.contains { screens[$0].tabs.map { !$0.saved.isEmpty } ?? false }
    }

    /// ``writeAddedAndRemoved(before:after:into:)`` for two stages without saved tab stacks: a
    /// change keeps a prefix of the stage (the same ids in the same places) and replaces the rest,
    /// so only the rest is compared, id by id.
    private static func writeStageDifference(_ before: [Screen], _ after: [Screen], into writer: inout JSONWriter) {
        var kept = 0
        while kept < before.count, kept < after.count, before[kept].id == after[kept].id { kept += 1 }
        writer.writeLiteral(",\"added\":[")
        var first = true
        for index in kept..<after.count where !before[kept...].contains(where: { $0.id == after[index].id }) {
            if !first { writer.writeLiteral(",") }
            first = false
            writer.writeString(after[index].scene)
        }
        writer.writeLiteral("],\"removed\":[")
        first = true
        for index in kept..<before.count where !after[kept...].contains(where: { $0.id == before[index].id }) {
            if !first { writer.writeLiteral(",") }
            first = false
            writer.writeString(before[index].scene)
        }
        writer.writeLiteral("]")
    }

    /// Every screen of a stage, root to top, with each saved tab stack after its tabs screen
    /// (tab names in order), read in place.
    private static func forEachScreen(_ screens: [Screen], _ body: (borrowing Screen) -> Void) {
        for index in screens.indices {
            body(screens[index])
            if let saved = screens[index].tabs?.saved, !saved.isEmpty {
                for name in saved.keys.sorted() { forEachScreen(saved[name] ?? [], body) }
            }
        }
    }

    /// The number of a screen id `eN`; -1 for an id of another form (a client's screen in a
    /// stored snapshot), which then counts as neither created nor kept by number.
    private static func number(of id: String) -> Int {
        let utf8 = id.utf8
        guard utf8.first == UInt8(ascii: "e") else { return -1 }
        return DecimalDigits.parse(utf8.dropFirst()) ?? -1
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
