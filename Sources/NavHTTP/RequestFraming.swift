import NavJSON

// Strict request framing (RFC 9112 §6): what a request's head says about where its body ends
// and which host it is for must be unambiguous, or a proxy in front of navd and navd itself may
// read the same bytes as different requests (request smuggling).

/// What is wrong with a request's framing, found on the access handler's first call; such a
/// request is answered at once and its connection closed, none of its body read.
package enum FramingFault: Equatable, Sendable {
    /// The head is ambiguous or broken (400): `reason` says how, for the client.
    case malformed(reason: String)
    /// `Transfer-Encoding` names a coding navd does not decode (501): `coding` is the first one.
    case unsupportedCoding(String)

    /// Checks a request's header fields as MHD parsed them (names lowercased, a repeated field's
    /// values joined and marked repeated).
    ///
    /// libmicrohttpd 0.9.75 frames a request by the first `Transfer-Encoding` if there is one
    /// (reading a body of unknown length until the connection closes when it is not `chunked`),
    /// else by the first `Content-Length`; it keeps a name with blanks before its colon as a
    /// field of its own, and needs no `Host`. A proxy may frame the same bytes by another of
    /// these fields, so every ambiguity is refused rather than resolved:
    /// - a field name that is not a token (`Content-Length : 2`, which MHD would not see as
    ///   `Content-Length` but a proxy may), in `badName`;
    /// - `Content-Length` together with `Transfer-Encoding`, or `Content-Length` sent twice;
    /// - `Transfer-Encoding` on HTTP/1.0 (which has no chunked coding), or other than exactly
    ///   `chunked` (empty, `chunked` twice, blanks around it); a coding other than `chunked` is
    ///   unsupported;
    /// - on HTTP/1.1 no `Host`, and on any version `Host` sent twice.
    ///
    /// A `Content-Length` MHD cannot read as one number (`-1`, `abc`, `2, 3`) never gets here:
    /// MHD answers it itself before calling the access handler (docs/design.md, "HTTP framing").
    ///
    /// - Returns: nil for a well-formed request, found without allocating: a few lookups among
    ///   the request's handful of fields.
    package static func check(_ headers: HTTPHeaders, http10: Bool, badName: Bool) -> FramingFault? {
        if badName {
            return .malformed(reason: "a header field name holds a character other than a token's (whitespace before the colon?)")
        }
        let host = headers.occurrence("host")
        if host.repeated { return .malformed(reason: "the Host header field is sent more than once") }
        if !host.sent, !http10 { return .malformed(reason: "an HTTP/1.1 request needs a Host header field") }
        let length = headers.occurrence("content-length")
        if length.repeated { return .malformed(reason: "the Content-Length header field is sent more than once") }
        guard let codings = headers["transfer-encoding"] else { return nil }
        if length.sent {
            return .malformed(reason: "a request may not have both Content-Length and Transfer-Encoding")
        }
        if http10 { return .malformed(reason: "an HTTP/1.0 request may not have a Transfer-Encoding") }
        // MHD decodes the body as chunked only when the value is exactly `chunked` (any case);
        // with anything else, a blank after it included, it reads the body until the connection
        // closes. So only that passes; a coding navd does not know is named in the answer.
        if codings.utf8.count == 7, codings.lowercased() == "chunked" { return nil }
        for coding in codings.split(separator: ",", omittingEmptySubsequences: false) {
            let name = coding.trimmingCharacters(in: " \t")
            if !(name.utf8.count == 7 && name.lowercased() == "chunked") && !name.isEmpty {
                return .unsupportedCoding(String(name.prefix(64)))
            }
        }
        return .malformed(reason: "Transfer-Encoding must be exactly \"chunked\", once")
    }

    /// Whether `byte` may appear in a header field name (`tchar`, RFC 9110 §5.6.2).
    @inline(__always)
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Whether the bytes `name` form a token: not empty, token bytes only.
    package static func isToken(_ name: UnsafeRawBufferPointer) -> Bool {
        guard !name.isEmpty else { return false }
        for byte in name where !isTokenByte(byte) { return false }
        return true
    }
}
