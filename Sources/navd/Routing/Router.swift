/// The request as a handler sees it: the HTTP request, the route's captured
/// parameters, and what the daemon attached to it.
struct RequestContext: Sendable {
    var request: HTTPRequest
    var parameters: [String: String]
    var requestID: String

    func parameter(_ name: String) -> String {
        parameters[name] ?? ""
    }
}

typealias RouteHandler = @Sendable (RequestContext) throws(APIError) -> HTTPResponse

/// Collects routes; `freeze()` turns them into the immutable ``Responder`` the server uses.
struct Router {
    fileprivate struct Route: Sendable {
        var method: String
        var template: String
        var segments: [Segment]
        var handler: RouteHandler
    }

    fileprivate enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    private var routes: [Route] = []

    /// Adds a route; `template` segments in braces capture (`/v1/sessions/{id}`).
    mutating func on(_ method: String, _ template: String, _ handler: @escaping RouteHandler) {
        let segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            part.hasPrefix("{") && part.hasSuffix("}")
                ? Segment.parameter(String(part.dropFirst().dropLast())) : Segment.literal(String(part))
        }
        routes.append(Route(method: method, template: template, segments: Array(segments), handler: handler))
    }

    func freeze() -> Responder {
        Responder(routes: routes)
    }
}

/// The frozen route table: finds the route for a request, or says why there is none.
struct Responder: Sendable {
    fileprivate let byLength: [Int: [Router.Route]]
    /// Every route template, for metrics labels and documentation tests.
    let templates: [(method: String, template: String)]

    fileprivate init(routes: [Router.Route]) {
        byLength = Dictionary(grouping: routes, by: \.segments.count)
        templates = routes.map { ($0.method, $0.template) }
    }

    enum Match {
        case found(template: String, handler: RouteHandler, parameters: [String: String])
        case methodNotAllowed(template: String, allowed: [String])
        case notFound
    }

    func match(method: String, path: String) -> Match {
        let parts = Self.segments(of: path)
        guard let candidates = byLength[parts.count] else { return .notFound }
        var allowed: [String] = []
        var allowedTemplate: String?
        for route in candidates {
            guard let parameters = Self.capture(route.segments, parts) else { continue }
            if route.method == method {
                return .found(template: route.template, handler: route.handler, parameters: parameters)
            }
            allowed.append(route.method)
            allowedTemplate = route.template
        }
        if let allowedTemplate { return .methodNotAllowed(template: allowedTemplate, allowed: allowed) }
        return .notFound
    }

    /// `/v1/sessions/x` → `["v1", "sessions", "x"]`; empty for a path without the leading `/`.
    private static func segments(of path: String) -> [Substring] {
        let utf8 = path.utf8
        guard utf8.first == UInt8(ascii: "/") else { return [] }
        var parts: [Substring] = []
        parts.reserveCapacity(6)
        var start = utf8.index(after: utf8.startIndex)
        while true {
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
            parts.append(path[start..<end])
            guard end < utf8.endIndex else { return parts }
            start = utf8.index(after: end)
        }
    }

    private static func capture(_ segments: [Router.Segment], _ parts: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let literal):
                guard part == literal else { return nil }
            case .parameter(let name):
                guard !part.isEmpty, let decoded = percentDecoded(part) else { return nil }
                parameters[name] = decoded
            }
        }
        return parameters
    }
}

/// Decodes `%XX` escapes of a path segment; `nil` for a broken escape or invalid UTF-8.
func percentDecoded(_ text: Substring) -> String? {
    guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        if byte == UInt8(ascii: "%") {
            guard let high = iterator.next().flatMap(Hex.value), let low = iterator.next().flatMap(Hex.value) else { return nil }
            bytes.append(high << 4 | low)
        } else {
            bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}
