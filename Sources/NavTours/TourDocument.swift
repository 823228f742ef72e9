import NavJSON

/// What tours cover: every reachable scene, or every link that can be taken.
public enum Coverage: String, Sendable, Hashable, CaseIterable {
    case scenes
    case links
}

/// A problem in a tours document, with the JSON pointer of the value at fault.
public struct TourDocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    public var pointer: String
    public var message: String

    public init(_ pointer: String, _ message: String) {
        self.pointer = pointer
        self.message = message
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
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

/// One tour: a new session created at the graph's start path (with the document's context), then
/// the steps in order.
public struct Tour: Sendable, Hashable {
    /// The canonical path the new session must show, and the types of its opening events.
    public var startPath: String
    public var startEvents: [String]
    public var startCovers: [String]
    public var steps: [TourStep]

    public init(startPath: String, startEvents: [String], startCovers: [String] = [], steps: [TourStep]) {
        self.startPath = startPath
        self.startEvents = startEvents
        self.startCovers = startCovers
        self.steps = steps
    }
}

/// A target the tours do not cover, and why.
public struct Uncovered: Sendable, Hashable {
    public var target: String
    public var reason: String

    public init(target: String, reason: String) {
        self.target = target
        self.reason = reason
    }
}

/// How the tours measure up: their steps against a lower bound on the steps any set of tours
/// covering the same targets with the same kinds of step needs (``TourPlanner``).
public struct TourSummary: Sendable, Hashable {
    public var targets: Int
    public var covered: Int
    public var tours: Int
    public var steps: Int
    public var lowerBound: Int
    /// How the lower bound was found, in a sentence.
    public var lowerBoundReason: String
    public var uncovered: [Uncovered]
    /// The search stopped at its state budget before it had seen every state it could reach.
    public var truncated: Bool

    public init(
        targets: Int, covered: Int, tours: Int, steps: Int, lowerBound: Int, lowerBoundReason: String,
        uncovered: [Uncovered], truncated: Bool
    ) {
        self.targets = targets
        self.covered = covered
        self.tours = tours
        self.steps = steps
        self.lowerBound = lowerBound
        self.lowerBoundReason = lowerBoundReason
        self.uncovered = uncovered
        self.truncated = truncated
    }
}

/// The output of `navd tours` and the input of `navd replay` (README, "Tours"):
///
/// ```json
/// {"format": "navd-tours/1", "cover": "scenes",
///  "graph": {"name": "news", "fingerprint": "fnv1a64:…"},
///  "context": {"user": "tour"},
///  "summary": {"targets": 12, "covered": 12, "tours": 3, "steps": 14, "lowerBound": 11, …},
///  "tours": [{"start": {"path": "/top", "events": ["transitionStart", …], "covers": ["top"]},
///             "steps": [{"intent": {"link": "news", "params": {"category": 0}},
///                        "path": "/top/list_news(category=0)", "events": […], "covers": ["list_news"]}, …]}]}
/// ```
public struct TourDocument: Sendable, Hashable {
    public static let format = "navd-tours/1"

    public var graphName: String
    /// ``GraphFingerprint`` of the graph document the tours were computed from.
    public var fingerprint: String
    public var cover: Coverage
    /// The session context every tour's session is created with: each key a scene `requires`.
    public var context: [String: JSONValue]
    public var tours: [Tour]
    public var summary: TourSummary?

    public init(
        graphName: String, fingerprint: String, cover: Coverage, context: [String: JSONValue], tours: [Tour],
        summary: TourSummary? = nil
    ) {
        self.graphName = graphName
        self.fingerprint = fingerprint
        self.cover = cover
        self.context = context
        self.tours = tours
        self.summary = summary
    }
}

// MARK: JSON

extension TourDocument {
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "format": .string(Self.format),
            "cover": .string(cover.rawValue),
            "graph": ["name": .string(graphName), "fingerprint": .string(fingerprint)],
            "context": .object(context),
            "tours": .array(tours.map(\.json)),
        ]
        if let summary { members["summary"] = summary.json }
        return .object(members)
    }

    /// Reads a tours document.
    /// - Throws: ``TourDocumentError`` naming the first value that does not fit the format.
    public init(json: JSONValue) throws(TourDocumentError) {
        guard let members = json.objectValue else { throw TourDocumentError("", "a tours document is a JSON object") }
        guard members["format"]?.stringValue == Self.format else {
            throw TourDocumentError("/format", "must be \"\(Self.format)\"")
        }
        guard let graph = members["graph"]?.objectValue, let name = graph["name"]?.stringValue,
              let fingerprint = graph["fingerprint"]?.stringValue else {
            throw TourDocumentError("/graph", "must be {\"name\", \"fingerprint\"}, both strings")
        }
        guard let coverText = members["cover"]?.stringValue, let cover = Coverage(rawValue: coverText) else {
            throw TourDocumentError("/cover", "must be \"scenes\" or \"links\"")
        }
        guard let context = (members["context"] ?? .object([:])).objectValue else {
            throw TourDocumentError("/context", "must be an object")
        }
        guard let tourValues = members["tours"]?.arrayValue else { throw TourDocumentError("/tours", "must be an array") }
        var tours: [Tour] = []
        for (index, value) in tourValues.enumerated() {
            tours.append(try Tour(json: value, at: "/tours/\(index)"))
        }
        self.init(graphName: name, fingerprint: fingerprint, cover: cover, context: context, tours: tours)
    }
}

extension Tour {
    var json: JSONValue {
        [
            "start": ["path": .string(startPath), "events": .array(startEvents.map(JSONValue.string)),
                      "covers": .array(startCovers.map(JSONValue.string))],
            "steps": .array(steps.map(\.json)),
        ]
    }

    init(json: JSONValue, at pointer: String) throws(TourDocumentError) {
        guard let members = json.objectValue else { throw TourDocumentError(pointer, "a tour is an object") }
        guard let start = members["start"]?.objectValue, let path = start["path"]?.stringValue else {
            throw TourDocumentError(pointer + "/start", "must be {\"path\", \"events\"}")
        }
        let events = try Self.strings(start["events"], at: pointer + "/start/events")
        let covers = try Self.strings(start["covers"] ?? .array([]), at: pointer + "/start/covers")
        guard let stepValues = members["steps"]?.arrayValue else { throw TourDocumentError(pointer + "/steps", "must be an array") }
        var steps: [TourStep] = []
        for (index, value) in stepValues.enumerated() {
            let at = "\(pointer)/steps/\(index)"
            guard let step = value.objectValue, let intent = step["intent"], let path = step["path"]?.stringValue else {
                throw TourDocumentError(at, "a step is {\"intent\", \"path\", \"events\"}")
            }
            steps.append(TourStep(
                intent: try TourIntent(json: intent, at: at + "/intent"), path: path,
                events: try Self.strings(step["events"], at: at + "/events"),
                covers: try Self.strings(step["covers"] ?? .array([]), at: at + "/covers")
            ))
        }
        self.init(startPath: path, startEvents: events, startCovers: covers, steps: steps)
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
            "covers": .array(covers.map(JSONValue.string)),
        ]
    }
}

extension TourSummary {
    var json: JSONValue {
        [
            "targets": .int(targets), "covered": .int(covered), "tours": .int(tours), "steps": .int(steps),
            "lowerBound": .int(lowerBound), "lowerBoundReason": .string(lowerBoundReason),
            "uncovered": .array(uncovered.map { ["target": .string($0.target), "reason": .string($0.reason)] }),
            "truncated": .bool(truncated),
        ]
    }
}
