import NavHTTP

/// What a route does: the request in, the answer out. Whatever it throws is answered by
/// ``APIError/init(answering:)``, the one place errors become problem+json.
typealias RouteHandler = @Sendable (RequestContext) throws -> HTTPResponse

/// The daemon's route table: NavHTTP's ``Router`` matches the templates, this keeps what each
/// route leads to, by the route's index.
struct Routes {
    private(set) var router = Router()
    private(set) var handlers: [RouteHandler] = []

    /// Adds a route; `template` segments in braces capture (`/v1/sessions/{id}`).
    mutating func on(_ method: String, _ template: String, _ handler: @escaping RouteHandler) {
        router.on(method, template)
        handlers.append(handler)
    }
}
