import NavCore
import NavHTTP
import NavJSON
import NavSessions
import NavWire

/// The small JSON shapes of docs/design.md, "Routes and wire shapes" (the session view is in `WireWriter.swift`).
enum Wire {
    static func summary(_ session: StoredSession) -> JSONValue {
        [
            "id": .string(session.id),
            "graph": ["name": .string(session.graphName), "version": .int(session.graphVersion)],
            "version": .int(session.state.version),
            "path": .string(session.state.pathText)
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
    /// A session view (written by ``SessionService/view(of:events:eventsJSON:token:)``), with the
    /// session's version as its entity tag.
    static func sessionView(_ view: [UInt8], version: Int, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        // Room for the X-Request-Id that Application adds: one allocation for the list.
        var allHeaders: [(String, String)] = []
        allHeaders.reserveCapacity(3 + headers.count)
        allHeaders.append(("Content-Type", "application/json"))
        allHeaders.append(("ETag", .etag(version)))
        allHeaders.append(contentsOf: headers)
        return HTTPResponse(status: status, headers: allHeaders, body: view)
    }
}
