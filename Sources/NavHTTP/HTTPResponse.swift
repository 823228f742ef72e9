/// One HTTP response to be sent by ``HTTPServer``.
///
/// `Content-Length` and `Date` are added by the server; do not set them.
package struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    package var status: Int
    /// Header fields in the order they are to be sent; names may repeat.
    package var headers: [(String, String)]
    /// The response body, copied by the server when the response is queued.
    package var body: [UInt8]
    /// A body written while it is sent, in place of `body` (sent chunked, with no `Content-Length`).
    package var stream: ResponseStream?
    /// An answer given later, in place of this one (see ``DeferredResponse``).
    package var deferred: DeferredResponse?

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `stream`, sent as it is written (see ``ResponseStream``).
    package init(status: Int, headers: [(String, String)] = [], stream: ResponseStream) {
        self.status = status
        self.headers = headers
        self.body = []
        self.stream = stream
    }

    /// An answer given later through `deferred` (see ``DeferredResponse``). Its status, headers and
    /// body here are never sent.
    package init(deferred: DeferredResponse) {
        self.status = 200
        self.headers = []
        self.body = []
        self.deferred = deferred
    }

    /// Makes the response end its connection: `Connection: close` replaces any `Connection`
    /// field the handler set (MHD closes the connection after a response that says so).
    package mutating func closesConnection() {
        headers.removeAll { $0.0.lowercased() == "connection" }
        headers.append(("Connection", "close"))
    }
}
