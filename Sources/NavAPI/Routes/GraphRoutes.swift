import NavCore
import NavDiagram
import NavHTTP
import NavJSON
import NavSessions

/// `/v1/graphs…`: list, read and draw (open), upload, remove a version and upgrade every
/// session (admin).
struct GraphRoutes: Sendable {
    let graphs: GraphRegistry
    let sessions: SessionService
    let adminToken: TokenDigest?
    /// The `graph_work` budget: drawing a diagram, reading and validating an upload, and an
    /// upgrade or a version's removal (each reads every session of the graph) hold a slot while
    /// they run, so that such work never holds every HTTP thread
    /// (docs/design.md, "Heavy graph work").
    let work: Budget
    /// Diagrams already drawn, by graph version.
    let diagrams = DiagramCache()

    func register(in router: inout Routes) {
        router.on("GET", "/v1/graphs") { _ in
            .json(["graphs": .array(graphs.all().map { Wire.graphSummary($0.latest) })])
        }
        router.on("GET", "/v1/graphs/{name}") { context in
            let name = context.parameter("name")
            let graph = try requestedVersion(context)
            return .json(
                [
                    "name": .string(name), "version": .int(graph.version), "start": .string(graph.graph.start),
                    "document": graph.document, "warnings": .array(graph.warnings.map(\.json))
                ], headers: [("ETag", .etag(graph.version))])
        }
        router.on("GET", "/v1/graphs/{name}/diagram") { context in
            // The format is checked before the graph is looked up: a bad request is 400 whether
            // or not the graph exists.
            let formatText = context.request.query["format"] ?? DiagramFormat.svg.rawValue
            guard let format = DiagramFormat(rawValue: formatText) else {
                let known = DiagramFormat.allCases.map(\.rawValue).joined(separator: ", ")
                throw APIError(.invalidRequest, "query parameter 'format' must be one of: \(known)", param: "format")
            }
            // `traffic=T`: the views since T drawn over it (docs/design.md, "Traffic and funnels"),
            // for the admin token only, since it shows what users did.
            var trafficSince: Int64?
            if let text = context.request.query["traffic"] {
                guard let since = Timestamp.milliseconds(parsing: text) else {
                    throw APIError(
                        .invalidRequest, "query parameter 'traffic' must be an RFC 3339 time, such as 2026-11-27T16:00:00Z",
                        param: "traffic")
                }
                try Admin.require(context, adminToken: adminToken)
                trafficSince = since
            }
            let graph = try requestedVersion(context)
            if let trafficSince {
                guard let range = sessions.feedRange(since: trafficSince, until: nil) else {
                    throw APIError(.notFound, "the feed is off (--feed-retention 0)")
                }
                let counted = try sessions.traffic(graph: graph.graph.name, in: range)
                let traffic = DiagramTraffic(
                    views: counted.scenes,
                    moves: Dictionary(
                        uniqueKeysWithValues: counted.edges.map { (DiagramTraffic.Move(from: $0.key.from, to: $0.key.to), $0.value) }))
                return HTTPResponse(
                    status: 200,
                    headers: [("Content-Type", format.mediaType), ("ETag", .etag(graph.version)), ("Cache-Control", "no-store")],
                    body: try diagrams.rendering(graph, as: format, traffic: traffic, work: work))
            }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", format.mediaType), ("ETag", .etag(graph.version))],
                body: try diagrams.rendering(graph, as: format, work: work)
            )
        }
        router.on("DELETE", "/v1/graphs/{name}") { context in
            try Admin.require(context, adminToken: adminToken)
            guard context.request.query["version"] != nil else {
                throw APIError(.invalidRequest, "query parameter 'version' is required: the version to remove", param: "version")
            }
            let number = try Query.int(context, "version", default: 1, range: 1...Int(Int32.max))
            let name = context.parameter("name")
            // Every session of the graph is read to see that none runs on the version.
            guard work.acquire() else { throw APIError.overCapacity(work) }
            defer { work.release() }
            guard try sessions.removeGraphVersion(name, version: number) else {
                throw APIError(.notFound, "no version \(number) of graph '\(name)'")
            }
            diagrams.forget(graph: name, version: number)
            return HTTPResponse(status: 204)
        }
        router.on("PUT", "/v1/graphs/{name}") { context in
            try Admin.require(context, adminToken: adminToken)
            // Reading, validating and loading a document is work proportional to it.
            // A body over the per-document bound is refused before it is parsed.
            let bound = graphs.limits.maxGraphBytes
            guard context.request.body.count <= bound else {
                throw APIError(.payloadTooLarge, "the graph document is \(context.request.body.count) bytes (limit \(bound))")
            }
            guard work.acquire() else { throw APIError.overCapacity(work) }
            defer { work.release() }
            let mediaType = context.request.headers["content-type"].map(RequestContext.mediaType) ?? ""
            let document: JSONValue
            switch mediaType {
            case "application/json":
                do {
                    document = try JSONValue(parsing: context.request.body)
                } catch {
                    throw APIError(.malformedJSON, "the graph is not valid JSON: \(error)")
                }
            case "application/yaml", "application/x-yaml", "text/yaml":
                do throws(GraphDocument.ReadError) {
                    document = try GraphDocument.yaml(bytes: context.request.body)
                } catch {
                    // `invalid_graph` always lists its issues (openapi.yaml, Problem): the
                    // unreadable document is one issue at the root, as for unreadable JSON files.
                    throw APIError(
                        .invalidGraph, "the graph is not valid YAML: \(error.message)",
                        issues: [GraphIssue(.invalidJSON, at: "", "not valid YAML: \(error.message)")]
                    )
                }
            default:
                throw APIError(.unsupportedMediaType, "send the graph as application/json or application/yaml")
            }
            // The store allocates the version (GraphRegistry.add): one number, one document everywhere.
            let (version, created) = try graphs.add(document, expectedName: context.parameter("name"))
            return .json(
                ["name": .string(version.graph.name), "version": .int(version.version), "warnings": .array(version.warnings.map(\.json))],
                status: created ? 201 : 200,
                headers: [("ETag", .etag(version.version))] + (created ? [("Location", "/v1/graphs/\(version.graph.name)")] : [])
            )
        }
        router.on("POST", "/v1/graphs/{name}/upgrade") { context in
            try Admin.require(context, adminToken: adminToken)
            let fields = Fields(object: try context.jsonObject(optional: true))
            try fields.only(["version"])
            let version = try fields.int("version", range: 1...Int(Int32.max))
            // A change of every session of the graph: as much work as it has sessions.
            guard work.acquire() else { throw APIError.overCapacity(work) }
            defer { work.release() }
            let report = try sessions.upgradeAll(graph: context.parameter("name"), to: version, credentials: context.credentials)
            return .json([
                "upgraded": .array(report.upgraded.map(JSONValue.string)),
                "unchanged": .array(report.unchanged.map(JSONValue.string)),
                "refused": .array(
                    report.refused.map { refusal in
                        ["id": .string(refusal.id), "problem": APIError(refusal.error).json]
                    })
            ])
        }
    }

    /// The graph version a request names: `?version=N`, or the latest.
    /// - Throws: 400 for a malformed version, 404 for an unknown graph or version.
    private func requestedVersion(_ context: RequestContext) throws -> GraphVersion {
        let name = context.parameter("name")
        let found: GraphVersion?
        if context.request.query["version"] != nil {
            let number = try Query.int(context, "version", default: 1, range: 1...Int(Int32.max))
            do throws(StoreError) {
                found = try graphs.version(name, number, readingThrough: true)
            } catch {
                throw APIError(ServiceError(storeError: error, "could not read the stored graphs"))
            }
            guard found != nil else { throw APIError(.notFound, "no version \(number) of graph '\(name)'") }
        } else {
            found = try graphs.latest(name)
        }
        guard let graph = found else { throw APIError(.notFound, "no graph '\(name)'") }
        return graph
    }
}
