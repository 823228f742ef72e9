import HTTPTypes
import OpenAPIRuntime

/// Everything a NavClient call throws.
public enum NavClientError: Error, Sendable, CustomStringConvertible {
    /// navd refused the request: its problem document.
    case problem(NavProblem)
    /// No answer came: the daemon is down or unreachable, the connection broke, a deadline passed.
    case transport(operation: String, underlying: any Error)
    /// An answer came that openapi.yaml does not describe for the operation (an undocumented
    /// status, a body of another shape), or an event stream message that cannot be read.
    case unexpectedResponse(operation: String, status: Int?, detail: String)
    /// The call was cancelled (its task was).
    case cancelled

    /// The problem document when navd refused, else nil: `try? … ` aside, the usual way to test
    /// for a code is `catch .problem(let problem) where problem.code == .stackUnderflow`.
    public var problem: NavProblem? {
        if case .problem(let problem) = self { return problem }
        return nil
    }

    public var description: String {
        switch self {
        case .problem(let problem): "navd refused: \(problem)"
        case .transport(let operation, let underlying): "\(operation): no answer from navd: \(underlying)"
        case .unexpectedResponse(let operation, let status, let detail):
            "\(operation): unexpected answer\(status.map { " (status \($0))" } ?? ""): \(detail)"
        case .cancelled: "cancelled"
        }
    }

    /// Sorts an error the generated client threw: a ``NavProblem`` the problem middleware raised
    /// (wrapped in `ClientError`), a failure with no answer, or an answer the client could not read.
    init(_ error: any Error, operation: String) {
        if let error = error as? NavClientError {
            self = error
            return
        }
        if let problem = error as? NavProblem {
            self = .problem(problem)
            return
        }
        if error is CancellationError {
            self = .cancelled
            return
        }
        guard let clientError = error as? ClientError else {
            self = .transport(operation: operation, underlying: error)
            return
        }
        if let problem = clientError.underlyingError as? NavProblem {
            self = .problem(problem)
        } else if clientError.underlyingError is CancellationError {
            self = .cancelled
        } else if let response = clientError.response {
            self = .unexpectedResponse(operation: operation, status: response.status.code, detail: clientError.causeDescription)
        } else {
            self = .transport(operation: operation, underlying: clientError.underlyingError)
        }
    }

    /// An output case other than the one the call expects (an undocumented status).
    static func unexpected(_ output: Any, operation: String) -> NavClientError {
        // The only outputs that get here are `.undocumented(statusCode:_:)`: every documented
        // refusal is a problem document, which ProblemMiddleware has turned into an error already.
        var status: Int?
        if let payload = Mirror(reflecting: output).children.first?.value {
            status = Mirror(reflecting: payload).children.first(where: { $0.label == "statusCode" })?.value as? Int
        }
        return .unexpectedResponse(operation: operation, status: status, detail: "\(output)".prefix(500).description)
    }
}
