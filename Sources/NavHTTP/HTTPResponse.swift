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

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
