import NavCore
import NavJSON

/// Why a use case of the server refused or failed: domain errors only, no HTTP.
///
/// The daemon turns each into its problem+json answer in exactly one place (`APIError(_:)` in
/// `Sources/NavAPI/Routes/APIError.swift`); nothing here knows a status code or a header.
package struct ServiceError: Error, Sendable {
    package enum Code: Sendable, Equatable {
        /// NavCore refused the intent (a path that does not parse, a guard, an unknown scene…).
        case navigation(NavError.Code)
        /// The request's values break a rule of the server (a context too large…).
        case invalidRequest
        /// No credentials were presented.
        case unauthorized
        /// Credentials were presented and open nothing here.
        case invalidToken
        case sessionNotFound
        case unknownGraph
        case invalidGraph
        /// The session is not at the version the request expected; `currentVersion` says where it is.
        case versionConflict
        case tooManySessions
        /// A graph document over the bytes one version may have.
        case payloadTooLarge
        /// A budget of the session's is full for now (its watchers, its answers kept under an
        /// `Idempotency-Key`): nothing was changed; retry after ``ServiceError/retryAfter``.
        case tooManyRequests
        /// A daemon-wide budget is full for now (watchers, graph memory, heavy graph work, kept
        /// answers): nothing was changed; retry after ``ServiceError/retryAfter``.
        case overCapacity
        /// A graph version that is the newest or that some session runs on cannot be removed.
        case graphInUse
        /// A resource that does not exist (not a session: ``sessionNotFound``).
        case notFound
        /// A feed cursor older than the records retained.
        case cursorExpired
        /// A past version of a session that can no longer be rebuilt: its records were swept or
        /// purged, or the graph version it ran on was removed.
        case versionExpired
        /// The store cannot take work now; nothing was changed.
        case storeUnavailable
        case `internal`
    }

    package var code: Code
    package var detail: String
    package var offset: Int?
    package var param: String?
    package var issues: [GraphIssue]?
    /// With `command_refused`: the guard that failed, a JSON pointer into the screen's state.
    package var pointer: String?
    /// With a refused batch: the item refused, from 0.
    package var index: Int?
    /// With `upgrade_refused`: every reason.
    package var reasons: [NavError.Reason]?
    /// With `confirmation_required`: `{token, screen, intent}` (docs/design.md, "Leave confirmation").
    package var confirmation: JSONValue?
    /// With ``Code/versionConflict``: the session's version now.
    package var currentVersion: Int?
    /// With ``Code/tooManyRequests`` and ``Code/overCapacity``: seconds until a retry may succeed.
    package var retryAfter: Int?
    /// What went wrong inside, for the log only; never shown to a client.
    package var logMessage: String?

    package init(_ code: Code, _ detail: String, offset: Int? = nil, param: String? = nil, issues: [GraphIssue]? = nil) {
        self.code = code
        self.detail = detail
        self.offset = offset
        self.param = param
        self.issues = issues
    }

    /// 503 `over_capacity` for a daemon-wide budget that is full, to be retried after a second.
    package static func overCapacity(_ budget: Budget) -> ServiceError {
        var error = ServiceError(.overCapacity, "navd is running its most \(budget.resource) (\(budget.limit)) at once; retry later")
        error.retryAfter = 1
        return error
    }

    /// NavCore's refusal, as it is.
    package init(_ error: NavError) {
        self.init(.navigation(error.code), error.message, offset: error.offset, param: error.param)
        pointer = error.pointer
        index = error.index
        reasons = error.reasons
    }

    /// An internal error whose cause goes to the log, never to the client.
    package init(_ code: Code, _ detail: String, storeMessage: String) {
        self.init(code, detail)
        self.logMessage = storeMessage
    }

    /// A store failure: ``Code/storeUnavailable`` when the store cannot be reached now (its cause
    /// logged, never sent), else an internal error described by `detail`.
    package init(storeError error: StoreError, _ detail: String) {
        if error.kind == .unavailable {
            self.init(.storeUnavailable, "the store cannot take work now; nothing was changed, retry later", storeMessage: error.message)
        } else {
            self.init(.internal, detail, storeMessage: error.message)
        }
    }
}
