import CMicroHTTPD
import Synchronization

/// A response given later than the handler returns: a long poll that answers when there is
/// something to say (docs/design.md, "Live sessions").
///
/// A handler answers with ``HTTPResponse/init(deferred:)`` and keeps the deferred response; any
/// thread later ``resolve(_:)``s it, once. Meanwhile the connection is suspended
/// (`MHD_suspend_connection`): it holds no pool thread and is not polled. Resolving resumes it,
/// and MHD's next call of the access handler queues the answer, as any answer.
package final class DeferredResponse: Sendable {
    private struct State {
        var response: HTTPResponse?
        /// The connection, while it is suspended waiting for the answer.
        var suspended: Connection?
        /// Headers every answer to this request carries (added by the application around the handler).
        var headers: [(String, String)] = []
        /// Told the answer once it is given (the application's request log and metrics).
        var onResolve: (@Sendable (HTTPResponse) -> Void)?
        /// The client hung up before the answer: none is given, the connection is closed.
        var hungUp = false
        /// Told when the client hangs up first (the watcher lets its slot go).
        var onHangUp: (@Sendable () -> Void)?
    }

    /// An MHD connection handle, used only under the mutex while MHD holds the connection.
    private struct Connection: @unchecked Sendable {
        let handle: OpaquePointer
    }

    private let state = Mutex(State())

    package init() {}

    /// Gives the answer; later calls are ignored, and so is every call once the client has hung
    /// up. - Returns: whether this call gave it.
    @discardableResult
    package func resolve(_ response: HTTPResponse) -> Bool {
        let told = state.withLock { state -> (HTTPResponse, (@Sendable (HTTPResponse) -> Void)?)? in
            guard state.response == nil, !state.hungUp else { return nil }
            var response = response
            response.headers += state.headers
            state.response = response
            if let connection = state.suspended {
                state.suspended = nil
                MHD_resume_connection(connection.handle)
            }
            defer {
                state.onResolve = nil
                // It will not be called now; it may hold what holds this answer.
                state.onHangUp = nil
            }
            return (response, state.onResolve)
        }
        guard let (response, onResolve) = told else { return false }
        onResolve?(response)
        return true
    }

    /// Runs `body` with the answer once it is given (at once if it has been).
    package func onResolve(_ body: @escaping @Sendable (HTTPResponse) -> Void) {
        let given = state.withLock { state -> HTTPResponse? in
            if let response = state.response { return response }
            state.onResolve = body
            return nil
        }
        if let given { body(given) }
    }

    /// Runs `body` once if the client hangs up before the answer is given (at once if it has).
    package func onHangUp(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.hungUp { return true }
            if state.response == nil { state.onHangUp = body }
            return false
        }
        if now { body() }
    }

    /// Whether the answer has been given, or no longer can be (the client hung up).
    package var isResolved: Bool {
        state.withLock { $0.response != nil || $0.hungUp }
    }

    /// Adds `headers` to the answer, whenever it is given.
    package func addHeaders(_ headers: [(String, String)]) {
        state.withLock { state in
            if state.response != nil {
                state.response?.headers += headers
            } else {
                state.headers += headers
            }
        }
    }

    // MARK: The server's side

    /// What the access handler does with the request now.
    enum Next {
        case answer(HTTPResponse)
        /// No answer yet: the connection has been suspended until there is one.
        case suspended
        /// The client is gone: close the connection.
        case hungUp
    }

    /// The answer if there is one; otherwise suspends `connection` until there is. Called on the
    /// connection's pool thread, in the access handler.
    func answerOrSuspend(_ connection: OpaquePointer) -> Next {
        state.withLock { state in
            if state.hungUp { return .hungUp }
            if let response = state.response { return .answer(response) }
            state.suspended = Connection(handle: connection)
            MHD_suspend_connection(connection)
            return .suspended
        }
    }
}

extension DeferredResponse: HangupListener {
    /// No answer will be heard: the waiting ends now (``onHangUp(_:)``), and a suspended
    /// connection is resumed so that MHD closes it (the access handler answers `MHD_NO`).
    func clientHungUp() {
        let told = state.withLock { state -> (@Sendable () -> Void)?? in
            guard state.response == nil, !state.hungUp else { return nil }
            state.hungUp = true
            if let connection = state.suspended {
                state.suspended = nil
                MHD_resume_connection(connection.handle)
            }
            defer {
                state.onHangUp = nil
                state.onResolve = nil
            }
            return .some(state.onHangUp)
        }
        if case .some(let handler) = told { handler?() }
    }
}
