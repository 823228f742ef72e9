import OpenAPIRuntime

/// A refusal by navd: its problem document (RFC 9457, `application/problem+json`), typed as
/// openapi.yaml's `ProblemDocument`, with the HTTP status and the headers that go with it.
///
/// Every member the spec defines is here: `code` and `detail` always; `offset`
/// (`invalid_path`), `param` (`invalid_params`, `invalid_request`), `issues` (`invalid_graph`),
/// `pointer` (`command_refused`), `confirmation` (`confirmation_required`), `reasons`
/// (`upgrade_refused`) and `index` (the batch item refused) when the code carries them.
public struct NavProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The codes this client knows. A newer daemon may answer others: ``code`` is then nil and
    /// ``codeName`` says which.
    public typealias Code = Components.Schemas.KnownProblemCode
    public typealias Reason = Components.Schemas.ProblemDocument.ReasonsPayloadPayload

    /// The HTTP status of the answer (the document's own `status` says the same).
    public var status: Int
    /// The problem document as navd sent it.
    public var document: Components.Schemas.ProblemDocument
    /// `Retry-After`, in seconds, on 429 and 503 answers.
    public var retryAfter: Int?
    /// `WWW-Authenticate` on 401 answers: `Bearer` (no token) or `Bearer error="invalid_token"`.
    public var wwwAuthenticate: String?

    public init(status: Int, document: Components.Schemas.ProblemDocument, retryAfter: Int? = nil, wwwAuthenticate: String? = nil) {
        self.status = status
        self.document = document
        self.retryAfter = retryAfter
        self.wwwAuthenticate = wwwAuthenticate
    }

    /// The problem's code when this client knows it; nil for a code added by a newer daemon
    /// (then act on ``status``, and ``codeName`` names it).
    public var code: Code? { document.code.value1 }
    /// The code as navd sent it, known or not.
    public var codeName: String { document.code.value1?.rawValue ?? document.code.value2 ?? "" }
    public var detail: String { document.detail }
    public var title: String { document.title }
    /// `invalid_path`: the character offset where the path stopped parsing.
    public var offset: Int? { document.offset }
    /// `invalid_params`, `invalid_request`: the parameter, member, query parameter or header at fault.
    public var param: String? { document.param }
    /// `command_refused`: the guard that did not hold, a JSON pointer into the screen's state.
    public var pointer: String? { document.pointer }
    /// A refusal of a batch: the position of the item refused, from 0.
    public var index: Int? { document.index }
    /// `confirmation_required`: what `NavSession.confirm(_:)` would apply.
    public var confirmation: Components.Schemas.Confirmation? { document.confirmation }
    /// `upgrade_refused`: every reason the stage does not fit the version.
    public var reasons: [Reason]? { document.reasons }
    /// `invalid_graph`: every problem found in the document.
    public var issues: [Components.Schemas.GraphIssue]? { document.issues }

    public var description: String { "\(status) \(codeName): \(detail)" }
}
