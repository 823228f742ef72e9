import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sends openapi.yaml's request header parameters as written.
///
/// OpenAPIRuntime writes a header parameter as a URI component (its "simple" style, percent-
/// encoding all but unreserved characters), so `If-Match: "2"` would leave as `%222%22`, which
/// no server reads as an entity tag (RFC 9110 §8.8.3), and an `Idempotency-Key` with a space or
/// a slash as another key than the caller's. This undoes exactly that encoding (the runtime
/// writes `%` itself as `%25`, so the caller's value comes back unchanged) on the header
/// parameters navd defines.
struct HeaderFieldMiddleware: ClientMiddleware {
    static let parameters: [HTTPField.Name] = [.ifMatch, .ifNoneMatch, .init("Idempotency-Key")!, .init("Last-Event-ID")!]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        for name in Self.parameters {
            if let value = request.headerFields[name], let decoded = value.removingPercentEncoding {
                request.headerFields[name] = decoded
            }
        }
        return try await next(request, body, baseURL)
    }
}
