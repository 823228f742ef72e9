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
    static let all: [FramingAttack] =
        refused(
            status: 400, code: "malformed_request",
            [
                (
                    "Content-Length with Transfer-Encoding", post + "\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked",
                    "0\r\n\r\n"
                ),
                (
                    "Transfer-Encoding with Content-Length", post + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5",
                    "0\r\n\r\n"
                ),
                (
                    "Content-Length: -1 with Transfer-Encoding", post + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: -1",
                    "0\r\n\r\n"
                ),
                ("two different Content-Lengths", post + "\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40", "{}"),
                ("the same Content-Length twice", post + "\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2", "{}"),
                ("a space before a colon", post + "\r\nHost: x\r\nContent-Length : 2", "{}"),
                ("a tab before a colon", post + "\r\nHost: x\r\nTransfer-Encoding\t: chunked", "0\r\n\r\n"),
                ("no Host on HTTP/1.1", "GET /healthz HTTP/1.1", ""),
                ("two Hosts", "GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example", ""),
                ("a Host with user information", "GET /healthz HTTP/1.1\r\nHost: user@a.example", ""),
                ("a Host with two hosts", "GET /healthz HTTP/1.1\r\nHost: a.example, b.example", ""),
                ("an empty Host", "GET /healthz HTTP/1.1\r\nHost: ", ""),
                ("a Host whose port is out of range", "GET /healthz HTTP/1.1\r\nHost: a.example:65536", ""),
                ("two Hosts on HTTP/1.0", "GET /healthz HTTP/1.0\r\nHost: a.example\r\nHost: a.example\r\nConnection: keep-alive", ""),
                (
                    "Transfer-Encoding on HTTP/1.0",
                    "POST /v1/sessions HTTP/1.0\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked",
                    "2\r\n{}\r\n0\r\n\r\n"
                ),
                ("chunked twice", post + "\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked", "2\r\n{}\r\n0\r\n\r\n"),
                ("chunked with a blank after it", post + "\r\nHost: x\r\nTransfer-Encoding: chunked ", "2\r\n{}\r\n0\r\n\r\n"),
                ("a bare LF line end", post + "\r\nHost: x\r\nX-A: a\nContent-Length: 2", "{}"),
                ("a bare CR in a value", post + "\r\nHost: x\r\nX-A: a\rContent-Length: 2", "{}"),
                ("a bare CR in the target", "GET /healthz\rX HTTP/1.1\r\nHost: x", ""),
                ("a bare CR in the method", "GE\rT /healthz HTTP/1.1\r\nHost: x", ""),
                ("a tab in the target", "GET /healthz\tX HTTP/1.1\r\nHost: x", ""),
                ("a space in the target", "GET /healthz X HTTP/1.1\r\nHost: x", ""),
                ("a space after the target", "GET /healthz  HTTP/1.1\r\nHost: x", ""),
                ("a method that is not a token", "G(T /healthz HTTP/1.1\r\nHost: x", ""),
                ("two Authorizations", "GET /v1/graphs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b", ""),
                ("an absolute-form target with user information", "GET http://user@x/healthz HTTP/1.1\r\nHost: x", ""),
                ("an absolute-form target with no host", "GET http:///healthz HTTP/1.1\r\nHost: x", ""),
                ("an absolute-form target with a port but no host", "GET http://:80/healthz HTTP/1.1\r\nHost: x", ""),
                ("an absolute-form target whose port is not a number", "GET http://x:8o/healthz HTTP/1.1\r\nHost: x", ""),
                ("an absolute-form target with a stray bracket", "GET http://x]:80/healthz HTTP/1.1\r\nHost: x", ""),
                ("a folded header line", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b", "")
            ])
        + refused(
            status: 501, code: "unsupported_transfer_coding",
            [
                ("Transfer-Encoding: gzip", post + "\r\nHost: x\r\nTransfer-Encoding: gzip", ""),
                ("Transfer-Encoding: chunked, foo", post + "\r\nHost: x\r\nTransfer-Encoding: chunked, foo", "2\r\n{}\r\n0\r\n\r\n"),
                ("Transfer-Encoding: gzip, chunked", post + "\r\nHost: x\r\nTransfer-Encoding: gzip, chunked", "2\r\n{}\r\n0\r\n\r\n")
            ])

    /// A `Content-Length` libmicrohttpd 0.9.75 cannot read as one number: it answers these itself
    /// while parsing the head, before navd is called (docs/design.md, "HTTP framing").
    static let unreadableLengths: [FramingAttack] = refused(
        status: 400, code: "",
        [
            ("Content-Length: -1", post + "\r\nHost: x\r\nContent-Length: -1", ""),
            ("Content-Length: abc", post + "\r\nHost: x\r\nContent-Length: abc", ""),
            ("Content-Length: 2, 3", post + "\r\nHost: x\r\nContent-Length: 2, 3", "{}"),
            ("Content-Length: 2, 2", post + "\r\nHost: x\r\nContent-Length: 2, 2", "{}")
        ])

    /// Attacks, each `(name, head, body)`, that are all owed the same answer.
    private static func refused(status: Int, code: String, _ attacks: [(name: String, head: String, body: String)]) -> [FramingAttack] {
        attacks.map { FramingAttack(name: $0.name, head: $0.head, body: $0.body, status: status, code: code) }
    }

    /// A request that changes `victim` if navd ever reads it: its path becomes `help`.
    static func smuggled(into victim: NavdSession) -> String {
        let body = #"{"path":"help"}"#
        return "POST \(victim.url)/navigate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(victim.token)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }
}
