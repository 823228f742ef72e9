/// One HTTP request as the daemon's handler sees it: fully read, body included.
///
/// Built by ``HTTPServer`` from what libmicrohttpd parsed; a plain value, so
/// handlers and tests can make their own.
package struct HTTPRequest: Sendable {
    /// The method as sent (`GET`, `POST`, …).
    package var method: String
    /// The URL path without the query, with its percent-encoding kept as sent,
    /// so that `%2F` inside a path segment stays distinguishable from `/`.
    package var path: String
    /// Query arguments, decoded (`+` is a space, `%XX` a byte, invalid UTF-8
    /// repaired). A key without `=` maps to the empty string; of a repeated key
    /// the last value is here, and ``repeatedQuery`` names it.
    package var query: [String: String]
    /// The first query argument given more than once, if any: a proxy or a log may read another of
    /// its values than the last, so the application refuses the request rather than pick one.
    package var repeatedQuery: String?
    /// Header fields with lowercased names. Repeated fields are joined with
    /// `", "` in the order received (RFC 9110 §5.3).
    package var headers: HTTPHeaders
    /// The request body, possibly empty.
    package var body: [UInt8]

    package init(
        method: String,
        path: String,
        query: [String: String] = [:],
        repeatedQuery: String? = nil,
        headers: HTTPHeaders = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.repeatedQuery = repeatedQuery
        self.headers = headers
        self.body = body
    }
}
