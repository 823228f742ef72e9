import NavJSON

/// The request as a handler sees it: the HTTP request, the route's captured
/// parameters, and what the daemon attached to it.
package struct RequestContext: Sendable {
    package var request: HTTPRequest
    package var parameters: RouteParameters
    package var requestID: String

    package func parameter(_ name: String) -> String {
        parameters[name] ?? ""
    }

    package init(request: HTTPRequest, parameters: RouteParameters, requestID: String) {
        self.request = request
        self.parameters = parameters
        self.requestID = requestID
    }
}

/// What a route template's `{name}` segments captured, percent-decoded. A route has one or
/// two, so a list beats a dictionary.
package struct RouteParameters: Sendable, ExpressibleByDictionaryLiteral {
    /// A struct, not a tuple, so the list is destroyed without the runtime's generic tuple code.
    private struct Pair {
        package var name: String
        package var value: String
    }

    private var pairs: [Pair] = []

    package init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements.map { Pair(name: $0.0, value: $0.1) }
    }

    fileprivate mutating func append(_ name: String, _ value: String) {
        if pairs.isEmpty { pairs.reserveCapacity(2) }
        pairs.append(Pair(name: name, value: value))
    }

    package subscript(name: String) -> String? {
        for pair in pairs where pair.name == name { return pair.value }
        return nil
    }
}

/// Collects route templates; `freeze()` turns them into the immutable ``Responder`` the server
/// uses. A route is known by its index, in the order of registration: what a route leads to
/// (the daemon's handlers, and what they throw) is kept by the caller, so this layer knows
/// nothing of it.
package struct Router {
    fileprivate struct Route: Sendable {
        package var method: String
        package var template: String
        package var segments: [Segment]
    }

    fileprivate enum Segment: Sendable, Hashable {
        case literal([UInt8])
        case parameter(String)
    }

    private var routes: [Route] = []

    package init() {}

    /// Adds a route; `template` segments in braces capture (`/v1/sessions/{id}`).
    /// - Returns: the route's index.
    @discardableResult
    package mutating func on(_ method: String, _ template: String) -> Int {
        let segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            part.hasPrefix("{") && part.hasSuffix("}")
                ? Segment.parameter(String(part.dropFirst().dropLast())) : Segment.literal(Array(part.utf8))
        }
        routes.append(Route(method: method, template: template, segments: Array(segments)))
        return routes.count - 1
    }

    package func freeze() -> Responder {
        Responder(routes: routes)
    }
}

/// The frozen route table: finds the route for a request, or says why there is none.
package struct Responder: Sendable {
    fileprivate let routes: [Router.Route]
    /// Every route template, in registration order: a found route's `index` points into it.
    package let templates: [(method: String, template: String)]

    fileprivate init(routes: [Router.Route]) {
        self.routes = routes
        templates = routes.map { ($0.method, $0.template) }
    }

    package enum Match {
        /// `index` is the route's position in ``templates``.
        case found(index: Int, template: String, parameters: RouteParameters)
        /// `index` is the position in ``templates`` of a route with that template (another method).
        case methodNotAllowed(index: Int, template: String, allowed: [String])
        case notFound
    }

    /// Matches the path's segments against each template in turn, on the path's bytes.
    package func match(method: String, path: String) -> Match {
        var path = path
        return path.withUTF8 { bytes in
            guard bytes.first == UInt8(ascii: "/") else { return .notFound }
            var segmentCount = 0
            for byte in bytes where byte == UInt8(ascii: "/") { segmentCount += 1 }
            var allowed: [String] = []
            var allowedRoute: Int?
            for index in routes.indices where routes[index].segments.count == segmentCount {
                guard let parameters = Self.capture(routes[index].segments, bytes) else { continue }
                // Fields read in place: a copy of the route would retain each of them.
                // Every GET route answers HEAD (RFC 9110 §9.3.2): the same answer, whose body the server leaves out.
                if routes[index].method == method || (method == "HEAD" && routes[index].method == "GET") {
                    return .found(index: index, template: routes[index].template, parameters: parameters)
                }
                allowed.append(routes[index].method)
                if routes[index].method == "GET" { allowed.append("HEAD") }
                allowedRoute = index
            }
            if let allowedRoute { return .methodNotAllowed(index: allowedRoute, template: routes[allowedRoute].template, allowed: allowed) }
            return .notFound
        }
    }

    /// The methods the routes matching `path` take (`HEAD` with each `GET`), for a CORS preflight.
    package func methods(path: String) -> [String] {
        if case .methodNotAllowed(_, _, let allowed) = match(method: "OPTIONS", path: path) { return allowed }
        return []
    }

    /// The parameters of `path` (`/…`, as many segments as `segments`) if it fits the template.
    /// Literal segments are compared first, in place, so a template that does not fit allocates
    /// nothing; parameters are decoded only once the whole template fits.
    private static func capture(_ segments: [Router.Segment], _ path: UnsafeBufferPointer<UInt8>) -> RouteParameters? {
        var start = 1
        var hasParameters = false
        for segment in segments {
            let end = segmentEnd(in: path, from: start)
            switch segment {
            case .literal(let literal):
                guard Self.equal(path, start..<end, literal) else { return nil }
            case .parameter:
                guard end > start else { return nil }
                hasParameters = true
            }
            start = end + 1
        }
        var parameters: RouteParameters = [:]
        guard hasParameters else { return parameters }
        start = 1
        for segment in segments {
            let end = segmentEnd(in: path, from: start)
            if case .parameter(let name) = segment {
                guard let decoded = PercentDecoding.decode(UnsafeBufferPointer(rebasing: path[start..<end]), strict: true) else {
                    return nil
                }
                parameters.append(name, decoded)
            }
            start = end + 1
        }
        return parameters
    }

    /// Where the segment starting at `start` ends: the next `/`, or the end of the path.
    @inline(__always)
    private static func segmentEnd(in path: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = min(start, path.count)
        while end < path.count, path[end] != UInt8(ascii: "/") { end += 1 }
        return end
    }

    @inline(__always)
    private static func equal(_ path: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: [UInt8]) -> Bool {
        guard range.count == literal.count else { return false }
        return literal.withUnsafeBufferPointer { literal in
            for offset in 0..<literal.count where path[range.lowerBound + offset] != literal[offset] { return false }
            return true
        }
    }
}
