/// One HTTP response to be sent by ``HTTPServer``.
///
/// `Content-Length` and `Date` are added by the server; do not set them.
struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    var status: Int
    /// Header fields in the order they are to be sent; names may repeat.
    var headers: [(String, String)]
    /// The response body, copied by the server when the response is queued.
    var body: [UInt8]

    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
