import NavJSON

/// The output of `navd tours` and the input of `navd replay` (docs/guide.md, "Tours"):
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
///
/// A document `navd record` writes has the cover `recorded` (``cover`` `nil`) and says which session
/// it was recorded from (``recording``); its one tour is that session's changes (docs/design.md, "Tours").
public struct TourDocument: Sendable, Hashable {
    public static let format = "navd-tours/1"
    public static let recordedCover = "recorded"

    /// Where a recorded document comes from (informative: replay does not read it).
    public struct Recording: Sendable, Hashable {
        public var session: String
        /// The graph version the session was created on.
        public var graphVersion: Int
        /// The last version recorded.
        public var to: Int

        public init(session: String, graphVersion: Int, to: Int) {
            self.session = session
            self.graphVersion = graphVersion
            self.to = to
        }
    }

    public var graphName: String
    /// ``GraphFingerprint`` of the graph document the tours were computed from (for a recorded
    /// document, the graph version the session was created on).
    public var fingerprint: String
    /// What planned tours cover; `nil` for a recorded document.
    public var cover: Coverage?
    public var recording: Recording?
    /// The session context every tour's session is created with: each key a scene `requires`.
    public var context: [String: JSONValue]
    public var tours: [Tour]
    public var summary: TourSummary?

    public init(
        graphName: String, fingerprint: String, cover: Coverage?, context: [String: JSONValue], tours: [Tour],
        summary: TourSummary? = nil, recording: Recording? = nil
    ) {
        self.graphName = graphName
        self.fingerprint = fingerprint
        self.cover = cover
        self.recording = recording
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
            "cover": .string(cover?.rawValue ?? Self.recordedCover),
            "graph": ["name": .string(graphName), "fingerprint": .string(fingerprint)],
            "context": .object(context),
            "tours": .array(tours.map(\.json))
        ]
        if let summary { members["summary"] = summary.json }
        if let recording {
            members["recorded"] = [
                "session": .string(recording.session),
                "graph": ["name": .string(graphName), "version": .int(recording.graphVersion)], "to": .int(recording.to)
            ]
        }
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
            let fingerprint = graph["fingerprint"]?.stringValue
        else {
            throw TourDocumentError("/graph", "must be {\"name\", \"fingerprint\"}, both strings")
        }
        let coverText = members["cover"]?.stringValue
        let cover = coverText.flatMap(Coverage.init(rawValue:))
        guard cover != nil || coverText == Self.recordedCover else {
            throw TourDocumentError("/cover", "must be \"scenes\", \"links\" or \"recorded\"")
        }
        var recording: Recording?
        if let recorded = members["recorded"] {
            guard let session = recorded["session"]?.stringValue, let version = recorded["graph"]?["version"]?.intValue,
                let to = recorded["to"]?.intValue
            else {
                throw TourDocumentError("/recorded", "must be {\"session\", \"graph\": {\"name\", \"version\"}, \"to\"}")
            }
            recording = Recording(session: session, graphVersion: version, to: to)
        }
        guard let context = (members["context"] ?? .object([:])).objectValue else {
            throw TourDocumentError("/context", "must be an object")
        }
        guard let tourValues = members["tours"]?.arrayValue else { throw TourDocumentError("/tours", "must be an array") }
        var tours: [Tour] = []
        for (index, value) in tourValues.enumerated() {
            tours.append(try Tour(json: value, at: "/tours/\(index)"))
        }
        self.init(graphName: name, fingerprint: fingerprint, cover: cover, context: context, tours: tours, recording: recording)
    }
}
