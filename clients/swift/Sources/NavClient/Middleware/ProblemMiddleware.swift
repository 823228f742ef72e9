import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns every `application/problem+json` answer into a thrown ``NavProblem``, whatever the
/// operation: the generated client would return it as one of a dozen output cases per
/// operation, each with its own type; a caller wants one error type with the document's `code`.
///
/// A body that is not a problem document after all (it does not parse) is passed on untouched,
/// for the generated code to report as an answer the spec does not describe.
struct ProblemMiddleware: ClientMiddleware {
    /// Problem documents are small; an `invalid_graph` with every issue of a large graph is the
    /// largest navd writes.
    static let limit = 4 << 20

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code >= 400, let responseBody, Self.isProblem(response.headerFields[.contentType]) else {
            return (response, responseBody)
        }
        let bytes = try await [UInt8](collecting: responseBody, upTo: Self.limit)
        guard let problem = try? JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(bytes)) else {
            return (response, HTTPBody(bytes))
        }
        throw NavProblem(
            status: response.status.code,
            document: problem.value1,
            retryAfter: response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) },
            wwwAuthenticate: response.headerFields[.wwwAuthenticate]
        )
    }

    static func isProblem(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        let essence = contentType.split(separator: ";", maxSplits: 1).first ?? ""
        return essence.trimmingCharacters(in: .whitespaces).lowercased() == "application/problem+json"
    }
}
