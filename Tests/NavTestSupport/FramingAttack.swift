import Foundation
import Testing

/// One request whose framing a proxy and navd could read differently (docs/design.md, "HTTP
/// framing"), with the answer navd owes it.
struct FramingAttack: Sendable, CustomTestStringConvertible {
    var name: String
    /// The request line and header fields, without the blank line that ends them.
    var head: String
    /// What follows the blank line: the body as one reading of the head frames it.
    var body: String
    var status: Int
    var code: String

    var testDescription: String { name }

    /// The bytes sent: the attack, then `smuggled` right behind it, as a proxy that framed the
    /// attack otherwise would send a second request on the same connection.
    func bytes(smuggling smuggled: String) -> [UInt8] {
        Array((head + "\r\n\r\n" + body + smuggled).utf8)
    }

    private static let post = "POST /v1/sessions HTTP/1.1\r\nContent-Type: application/json"

    /// Every ambiguity navd refuses itself, on the head alone.
    static let all: [FramingAttack] = [
        .init(
            name: "Content-Length with Transfer-Encoding", head: post + "\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked",
            body: "0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "Transfer-Encoding with Content-Length", head: post + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5",
            body: "0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "Content-Length: -1 with Transfer-Encoding",
            head: post + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: -1",
            body: "0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "two different Content-Lengths", head: post + "\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40",
            body: "{}", status: 400, code: "malformed_request"),
        .init(
            name: "the same Content-Length twice", head: post + "\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2",
            body: "{}", status: 400, code: "malformed_request"),
        .init(
            name: "a space before a colon", head: post + "\r\nHost: x\r\nContent-Length : 2",
            body: "{}", status: 400, code: "malformed_request"),
        .init(
            name: "a tab before a colon", head: post + "\r\nHost: x\r\nTransfer-Encoding\t: chunked",
            body: "0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "no Host on HTTP/1.1", head: "GET /healthz HTTP/1.1",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "two Hosts", head: "GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "two Hosts on HTTP/1.0", head: "GET /healthz HTTP/1.0\r\nHost: a.example\r\nHost: a.example\r\nConnection: keep-alive",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "Transfer-Encoding on HTTP/1.0",
            head: "POST /v1/sessions HTTP/1.0\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked",
            body: "2\r\n{}\r\n0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "chunked twice", head: post + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
            body: "2\r\n{}\r\n0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "chunked with a blank after it", head: post + "\r\nHost: x\r\nTransfer-Encoding: chunked ",
            body: "2\r\n{}\r\n0\r\n\r\n", status: 400, code: "malformed_request"),
        .init(
            name: "a bare LF line end", head: post + "\r\nHost: x\r\nX-A: a\nContent-Length: 2",
            body: "{}", status: 400, code: "malformed_request"),
        .init(
            name: "a bare CR in a value", head: post + "\r\nHost: x\r\nX-A: a\rContent-Length: 2",
            body: "{}", status: 400, code: "malformed_request"),
        .init(
            name: "a bare CR in the target", head: "GET /healthz\rX HTTP/1.1\r\nHost: x",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "a bare CR in the method", head: "GE\rT /healthz HTTP/1.1\r\nHost: x",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "a tab in the target", head: "GET /healthz\tX HTTP/1.1\r\nHost: x",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "a method that is not a token", head: "G(T /healthz HTTP/1.1\r\nHost: x",
            body: "", status: 400, code: "malformed_request"),
        .init(
            name: "Transfer-Encoding: gzip", head: post + "\r\nHost: x\r\nTransfer-Encoding: gzip",
            body: "", status: 501, code: "unsupported_transfer_coding"),
        .init(
            name: "Transfer-Encoding: chunked, foo", head: post + "\r\nHost: x\r\nTransfer-Encoding: chunked, foo",
            body: "2\r\n{}\r\n0\r\n\r\n", status: 501, code: "unsupported_transfer_coding"),
        .init(
            name: "Transfer-Encoding: gzip, chunked", head: post + "\r\nHost: x\r\nTransfer-Encoding: gzip, chunked",
            body: "2\r\n{}\r\n0\r\n\r\n", status: 501, code: "unsupported_transfer_coding")
    ]

    /// A `Content-Length` libmicrohttpd 0.9.75 cannot read as one number: it answers these itself
    /// while parsing the head, before navd is called (docs/design.md, "HTTP framing").
    static let unreadableLengths: [FramingAttack] = [
        .init(name: "Content-Length: -1", head: post + "\r\nHost: x\r\nContent-Length: -1", body: "", status: 400, code: ""),
        .init(name: "Content-Length: abc", head: post + "\r\nHost: x\r\nContent-Length: abc", body: "", status: 400, code: ""),
        .init(name: "Content-Length: 2, 3", head: post + "\r\nHost: x\r\nContent-Length: 2, 3", body: "{}", status: 400, code: ""),
        .init(name: "Content-Length: 2, 2", head: post + "\r\nHost: x\r\nContent-Length: 2, 2", body: "{}", status: 400, code: "")
    ]

    /// A request that changes `victim` if navd ever reads it: its path becomes `help`.
    static func smuggled(into victim: NavdSession) -> String {
        let body = #"{"path":"help"}"#
        return "POST \(victim.url)/navigate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(victim.token)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }
}
