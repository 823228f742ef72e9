import NavCore
import NavHTTP
import NavJSON
import NavServer
import NavWire

/// The small JSON shapes of DESIGN §4 (the session view is in `WireWriter.swift`).
enum Wire {
    static func summary(_ session: StoredSession) -> JSONValue {
        [
            "id": .string(session.id),
            "graph": ["name": .string(session.graphName), "version": .int(session.graphVersion)],
            "version": .int(session.state.version),
            "path": .string(session.state.pathText),
        ]
    }

    static func graphSummary(_ graph: GraphVersion) -> JSONValue {
        ["name": .string(graph.graph.name), "version": .int(graph.version), "start": .string(graph.graph.start)]
    }
}

extension HTTPResponse {
    /// A JSON answer.
    static func json(_ value: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        json(bytes: value.jsonBytes, status: status, headers: headers)
    }

    /// A JSON answer already written as bytes (by one of NavWire's writers).
    static func json(bytes: [UInt8], status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: bytes)
    }

    /// An answer about a session, with its version as the entity tag.
    static func session(bytes: [UInt8], version: Int) -> HTTPResponse {
        json(bytes: bytes, headers: [("ETag", .etag(version))])
    }
}

extension HTTPResponse {
    /// A session view written by NavWire's `JSONWriter.writeSessionView`.
    static func sessionView(
        _ session: StoredSession, events: [LifecycleEvent]? = nil, eventsJSON: [UInt8]? = nil, token: String? = nil,
        status: Int = 200, headers: [(String, String)] = []
    ) -> HTTPResponse {
        // Close to the size of a plain session's view (a screen without params or state writes
        // about 110 bytes; its params also appear in the path): one allocation of about the right
        // size. (Under glibc's malloc, which navd used before jemalloc, a request of 1 KiB or more
        // first folded its free chunks together, reading chunks all over a heap of a million
        // sessions; this kept a GET of up to five screens below that.) A larger view grows the buffer.
        let eventBytes = eventsJSON?.count ?? 96 * (events?.count ?? 0)
        var writer = JSONWriter(
            reservingCapacity: 192 + 128 * session.state.screens.count + session.state.pathText.utf8.count + eventBytes
                + (token == nil ? 0 : 96)
        )
        writer.writeSessionView(
            id: session.id, graphName: session.graphName, graphVersion: session.graphVersion, state: session.state,
            events: events, eventsJSON: eventsJSON, token: token
        )
        // Room for the X-Request-Id that Application adds: one allocation for the list.
        var allHeaders: [(String, String)] = []
        allHeaders.reserveCapacity(3 + headers.count)
        allHeaders.append(("Content-Type", "application/json"))
        allHeaders.append(("ETag", .etag(session.state.version)))
        allHeaders.append(contentsOf: headers)
        return HTTPResponse(status: status, headers: allHeaders, body: writer.finish())
    }
}
