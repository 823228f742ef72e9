import NavCore
import NavHTTP
import NavJSON
import NavSessions
import NavWire

/// Every refusal the daemon answers, with its stable `code` (docs/design.md, "Errors and codes").
///
/// Errors become responses in exactly one place (``APIError/response(requestID:)``);
/// anything unexpected is a bare `internal` with no internals in the body.
struct APIError: Error, Sendable {
    enum Code: String, Sendable, CaseIterable {
        case malformedJSON = "malformed_json"
        case invalidRequest = "invalid_request"
        case invalidPath = "invalid_path"
        case unauthorized
        case forbidden
        case transitionRefused = "transition_refused"
        case sessionNotFound = "session_not_found"
        case notFound = "not_found"
        case methodNotAllowed = "method_not_allowed"
        case notRemovable = "not_removable"
        case stackUnderflow = "stack_underflow"
        case versionConflict = "version_conflict"
        case payloadTooLarge = "payload_too_large"
        case unsupportedMediaType = "unsupported_media_type"
        case unknownScene = "unknown_scene"
        case unknownTransition = "unknown_transition"
        case unknownGraph = "unknown_graph"
        case invalidParams = "invalid_params"
        case invalidGraph = "invalid_graph"
        case stackTooDeep = "stack_too_deep"
        case idempotencyKeyReused = "idempotency_key_reused"
        case unknownCommand = "unknown_command"
        case commandRefused = "command_refused"
        case confirmationRequired = "confirmation_required"
        case upgradeRefused = "upgrade_refused"
        case tooManySessions = "too_many_sessions"
        case storeUnavailable = "store_unavailable"
        /// HTTP framing a proxy could read otherwise (docs/design.md, "HTTP framing").
        case malformedRequest = "malformed_request"
        /// A per-session budget is reached (docs/design.md, "Trust: budgets and strict input").
        case tooManyRequests = "too_many_requests"
        /// A daemon-wide budget is reached.
        case overCapacity = "over_capacity"
        /// navd is stopping; another instance (or this one, restarted) answers the retry.
        case shuttingDown = "shutting_down"
        case unsupportedTransferCoding = "unsupported_transfer_coding"
        /// A graph version some session still runs on cannot be removed.
        case graphInUse = "graph_in_use"
        /// A feed cursor older than the records retained: records after it were swept.
        case cursorExpired = "cursor_expired"
        /// A past version of a session whose records are no longer retained, or whose graph
        /// version was removed.
        case versionExpired = "version_expired"
        case `internal`

        /// The wire code of NavCore's refusal.
        init(_ refusal: NavError.Code) {
            self =
                switch refusal {
                case .invalidPath: .invalidPath
                case .invalidRequest: .invalidRequest
                case .unknownScene: .unknownScene
                case .unknownTransition: .unknownTransition
                case .invalidParams: .invalidParams
                case .transitionRefused: .transitionRefused
                case .notRemovable: .notRemovable
                case .stackUnderflow: .stackUnderflow
                case .stackTooDeep: .stackTooDeep
                case .notFound: .notFound
                case .unknownCommand: .unknownCommand
                case .commandRefused: .commandRefused
                case .confirmationRequired: .confirmationRequired
                case .upgradeRefused: .upgradeRefused
                }
        }

        var status: Int {
            switch self {
            case .malformedJSON, .invalidRequest, .invalidPath, .malformedRequest: 400
            case .unauthorized: 401
            case .forbidden, .transitionRefused: 403
            case .sessionNotFound, .notFound: 404
            case .methodNotAllowed: 405
            case .notRemovable, .stackUnderflow, .commandRefused, .confirmationRequired, .upgradeRefused, .graphInUse: 409
            case .versionConflict: 412
            case .cursorExpired, .versionExpired: 410
            case .payloadTooLarge: 413
            case .unsupportedMediaType: 415
            case .unknownScene, .unknownTransition, .unknownGraph, .invalidParams, .invalidGraph, .stackTooDeep,
                .idempotencyKeyReused, .unknownCommand:
                422
            case .tooManyRequests: 429
            case .tooManySessions, .storeUnavailable, .overCapacity, .shuttingDown: 503
            case .unsupportedTransferCoding: 501
            case .internal: 500
            }
        }

        var title: String {
            switch self {
            case .malformedJSON: "Malformed JSON"
            case .invalidRequest: "Invalid request"
            case .invalidPath: "Invalid path"
            case .unauthorized: "Unauthorized"
            case .forbidden: "Forbidden"
            case .transitionRefused: "Transition refused"
            case .sessionNotFound: "Session not found"
            case .notFound: "Not found"
            case .methodNotAllowed: "Method not allowed"
            case .notRemovable: "Screen not removable"
            case .stackUnderflow: "Stack underflow"
            case .versionConflict: "Version conflict"
            case .payloadTooLarge: "Payload too large"
            case .unsupportedMediaType: "Unsupported media type"
            case .unknownScene: "Unknown scene"
            case .unknownTransition: "Unknown transition"
            case .unknownGraph: "Unknown graph"
            case .invalidParams: "Invalid parameters"
            case .invalidGraph: "Invalid graph"
            case .stackTooDeep: "Stack too deep"
            case .idempotencyKeyReused: "Idempotency key reused"
            case .unknownCommand: "Unknown command"
            case .commandRefused: "Command refused"
            case .confirmationRequired: "Confirmation required"
            case .upgradeRefused: "Upgrade refused"
            case .tooManySessions: "Too many sessions"
            case .storeUnavailable: "Store unavailable"
            case .malformedRequest: "Malformed request"
            case .tooManyRequests: "Too many requests"
            case .overCapacity: "Over capacity"
            case .shuttingDown: "Shutting down"
            case .unsupportedTransferCoding: "Unsupported transfer coding"
            case .graphInUse: "Graph in use"
            case .cursorExpired: "Cursor expired"
            case .versionExpired: "Version expired"
            case .internal: "Internal error"
            }
        }
    }

    var code: Code
    var detail: String
    var offset: Int?
    var param: String?
    var issues: [GraphIssue]?
    /// The members some refusals add (`pointer`, `index`, `confirmation`, `reasons`).
    var members: [String: JSONValue] = [:]
    var headers: [(String, String)] = []
    /// What went wrong inside, for the log only; never sent to the client.
    var logMessage: String?

    init(_ code: Code, _ detail: String, offset: Int? = nil, param: String? = nil, issues: [GraphIssue]? = nil) {
        self.code = code
        self.detail = detail
        self.offset = offset
        self.param = param
        self.issues = issues
    }

    /// The one mapping from the server's domain errors to the wire: a code, its status and the
    /// headers a client needs to act on it (`WWW-Authenticate`, the current `ETag`).
    init(_ error: ServiceError) {
        let code: Code =
            switch error.code {
            case .navigation(let refusal): Code(refusal)
            case .invalidRequest: .invalidRequest
            case .unauthorized, .invalidToken: .unauthorized
            case .sessionNotFound: .sessionNotFound
            case .unknownGraph: .unknownGraph
            case .invalidGraph: .invalidGraph
            case .versionConflict: .versionConflict
            case .tooManySessions: .tooManySessions
            case .payloadTooLarge: .payloadTooLarge
            case .tooManyRequests: .tooManyRequests
            case .overCapacity: .overCapacity
            case .graphInUse: .graphInUse
            case .notFound: .notFound
            case .cursorExpired: .cursorExpired
            case .versionExpired: .versionExpired
            case .storeUnavailable: .storeUnavailable
            case .internal: .internal
            }
        self.init(code, error.detail, offset: error.offset, param: error.param, issues: error.issues)
        if let pointer = error.pointer { members["pointer"] = .string(pointer) }
        if let index = error.index { members["index"] = .int(index) }
        if let reasons = error.reasons { members["reasons"] = .array(reasons.map(\.json)) }
        if let confirmation = error.confirmation { members["confirmation"] = confirmation }
        logMessage = error.logMessage
        // RFC 6750 §3.1: a token that opens nothing is challenged as `invalid_token`.
        if error.code == .invalidToken { headers = [("WWW-Authenticate", #"Bearer error="invalid_token""#)] }
        if let version = error.currentVersion { headers = [("ETag", .etag(version))] }
        if let seconds = error.retryAfter { headers.append(("Retry-After", String(max(1, seconds)))) }
    }

    /// NavCore's refusal, as the server passes it on.
    init(_ error: NavError) {
        self.init(ServiceError(error))
    }

    /// What any error a handler throws answers: an `APIError` as it is, a domain error by
    /// ``init(_:)-(ServiceError)``, and anything else as a bare internal error (its text logged only).
    init(answering error: any Error) {
        switch error {
        case let error as APIError: self = error
        case let error as ServiceError: self.init(error)
        case let error as NavError: self.init(error)
        default:
            self.init(.internal, "an internal error occurred")
            logMessage = "\(error)"
        }
    }

    /// The answer's body (NavWire's problem shape).
    var problem: Problem {
        Problem(
            code: code.rawValue, title: code.title, status: code.status, detail: detail, offset: offset, param: param, issues: issues,
            members: members
        )
    }

    /// An RFC 9457 problem document.
    var json: JSONValue { problem.json }

    var response: HTTPResponse {
        var fields = [("Content-Type", "application/problem+json")] + headers
        switch code {
        // A wrong token sets its own challenge (`Bearer error="invalid_token"`, RFC 6750 §3.1).
        case .unauthorized where !headers.contains(where: { $0.0 == "WWW-Authenticate" }):
            fields.append(("WWW-Authenticate", "Bearer"))
        case .tooManySessions: fields.append(("Retry-After", "60"))
        // The store heals by itself once it can take work again (readiness probes it every second).
        case .storeUnavailable: fields.append(("Retry-After", "1"))
        // A daemon-wide budget frees as the work or the memory holding it ends.
        case .overCapacity where !headers.contains(where: { $0.0 == "Retry-After" }): fields.append(("Retry-After", "1"))
        default: break
        }
        return HTTPResponse(status: code.status, headers: fields, body: json.jsonBytes)
    }
}
