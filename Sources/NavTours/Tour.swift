import NavJSON

/// One tour: a new session created at the graph's start path, or at `request` (with the document's
/// context, or the tour's own), then the steps in order.
public struct Tour: Sendable, Hashable {
    /// The canonical path the new session must show, and the types of its opening events.
    public var startPath: String
    public var startEvents: [String]
    public var startCovers: [String]
    /// The start path sent when creating the session; `nil`: none sent, the graph's start.
    public var request: String?
    /// The creation context; `nil`: the document's.
    public var context: [String: JSONValue]?
    public var steps: [TourStep]

    public init(
        startPath: String, startEvents: [String], startCovers: [String] = [], request: String? = nil,
        context: [String: JSONValue]? = nil, steps: [TourStep]
    ) {
        self.startPath = startPath
        self.startEvents = startEvents
        self.startCovers = startCovers
        self.request = request
        self.context = context
        self.steps = steps
    }
}

/// One step of a tour: the intent, and what the daemon must answer — the canonical path after it
/// and the types of its lifecycle events, in order.
public struct TourStep: Sendable, Hashable {
    public var intent: TourIntent
    public var path: String
    public var events: [String]
    /// What this step covers first in the document: scene names, or link ids (`scene:link`,
    /// `*:link` for a global link). Informative; replay does not read it.
    public var covers: [String]

    public init(intent: TourIntent, path: String, events: [String], covers: [String] = []) {
        self.intent = intent
        self.path = path
        self.events = events
        self.covers = covers
    }
}

extension Tour {
    var json: JSONValue {
        var start: [String: JSONValue] = [
            "path": .string(startPath), "events": .array(startEvents.map(JSONValue.string)),
            "covers": .array(startCovers.map(JSONValue.string))
        ]
        if let request { start["request"] = .string(request) }
        if let context { start["context"] = .object(context) }
        return ["start": .object(start), "steps": .array(steps.map(\.json))]
    }

    init(json: JSONValue, at pointer: String) throws(TourDocumentError) {
        guard let members = json.objectValue else { throw TourDocumentError(pointer, "a tour is an object") }
        guard let start = members["start"]?.objectValue, let path = start["path"]?.stringValue else {
            throw TourDocumentError(pointer + "/start", "must be {\"path\", \"events\"}")
        }
        let events = try Self.strings(start["events"], at: pointer + "/start/events")
        let covers = try Self.strings(start["covers"] ?? .array([]), at: pointer + "/start/covers")
        let request: String?
        switch start["request"] {
        case nil, .null?: request = nil
        case .string(let text)?: request = text
        default: throw TourDocumentError(pointer + "/start/request", "must be a path string or null")
        }
        var context: [String: JSONValue]?
        if let given = start["context"] {
            guard let members = given.objectValue else { throw TourDocumentError(pointer + "/start/context", "must be an object") }
            context = members
        }
        guard let stepValues = members["steps"]?.arrayValue else { throw TourDocumentError(pointer + "/steps", "must be an array") }
        var steps: [TourStep] = []
        for (index, value) in stepValues.enumerated() {
            let at = "\(pointer)/steps/\(index)"
            guard let step = value.objectValue, let intent = step["intent"], let path = step["path"]?.stringValue else {
                throw TourDocumentError(at, "a step is {\"intent\", \"path\", \"events\"}")
            }
            steps.append(
                TourStep(
                    intent: try TourIntent(json: intent, at: at + "/intent"), path: path,
                    events: try Self.strings(step["events"], at: at + "/events"),
                    covers: try Self.strings(step["covers"] ?? .array([]), at: at + "/covers")
                ))
        }
        self.init(startPath: path, startEvents: events, startCovers: covers, request: request, context: context, steps: steps)
    }

    static func strings(_ value: JSONValue?, at pointer: String) throws(TourDocumentError) -> [String] {
        guard let elements = value?.arrayValue else { throw TourDocumentError(pointer, "must be an array of strings") }
        var result: [String] = []
        for element in elements {
            guard let text = element.stringValue else { throw TourDocumentError(pointer, "must be an array of strings") }
            result.append(text)
        }
        return result
    }
}

extension TourStep {
    var json: JSONValue {
        [
            "intent": intent.json, "path": .string(path), "events": .array(events.map(JSONValue.string)),
            "covers": .array(covers.map(JSONValue.string))
        ]
    }
}
