import NavJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// - on HTTP/1.1 no `Host`, and on any version `Host` sent twice, empty, or other than
    ///   `host[:port]` (two hosts, user information);
    /// - `Authorization` sent twice: which credentials count would be a guess, and a proxy or
    ///   a log may pick the other one.
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
        // RFC 9112 §3.2 asks a 400 of a Host with an invalid value. A valid one is `host[:port]`
        // as an absolute-form target's authority is, less the blanks after it, which are not part
        // of a value (MHD skips only those before). Not empty: that is for a target URI with no
        // authority (RFC 9110 §7.2), and an `http` URI always has one (§4.2.1).
        if let sent = headers["host"], !isHostAndPort(Substring(sent).utf8, trimmingBlanks: true) {
            return .malformed(reason: "the Host header field must be a host and an optional port")
        }
        if headers.occurrence("authorization").repeated {
            return .malformed(reason: "the Authorization header field is sent more than once")
        }
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

    /// The path to route for a request target in absolute-form (`http://host:8080/v1/graphs`),
    /// which a server must accept (RFC 9112 §3.2.2): what follows the authority, `/` when
    /// nothing does. MHD has already split the query off. The authority is only checked, never
    /// used: navd serves one origin, and reads no `Host` beyond the framing checks.
    /// - Returns: nil for a target not in absolute-form (an origin-form path, `*`, anything
    ///   else, which routes as it is); a fault when its authority is not a plain `host[:port]`
    ///   (``isHostAndPort(_:)``: nothing a proxy could read another way).
    package static func absoluteFormPath(_ target: String) -> AbsoluteTarget? {
        let utf8 = target.utf8
        guard let first = utf8.first, first == UInt8(ascii: "h") || first == UInt8(ascii: "H") else { return nil }
        let schemeLength: Int
        if Self.hasPrefix(utf8, "http://") {
            schemeLength = 7
        } else if Self.hasPrefix(utf8, "https://") {
            schemeLength = 8
        } else {
            return nil
        }
        let rest = utf8.dropFirst(schemeLength)
        let end = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let authority = rest[..<end]
        guard Self.isHostAndPort(authority) else {
            return .refused(.malformed(reason: "an absolute-form request target must name a host and an optional port, nothing else"))
        }
        let path = Substring(rest[end...])
        return .path(path.isEmpty ? "/" : String(path))
    }

    /// Whether `utf8` starts with the lowercase ASCII `prefix`, in any case.
    private static func hasPrefix(_ utf8: String.UTF8View, _ prefix: StaticString) -> Bool {
        guard utf8.count >= prefix.utf8CodeUnitCount else { return false }
        return zip(utf8, UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)).allSatisfy { sent, lower in
            sent == lower || ((UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) && sent | 0x20 == lower)
        }
    }

    /// Whether `authority` is `host[:port]` (RFC 3986 §3.2.2, §3.2.3): a host name or IPv4
    /// address of unreserved characters (letters, digits, `-`, `.`, `_`, `~`) with no empty
    /// label (a single trailing dot, a fully qualified name, aside), or an IPv6 address in
    /// brackets as `inet_pton` reads one, then optionally `:` and a port, 0–65535 in at most five
    /// digits. Narrower than RFC 3986 on purpose: no user information, no percent-encoding, no
    /// sub-delimiters (`;`, `,`, `=`…), which no host name needs and which parsers split
    /// differently. An empty host is refused as RFC 9110 §4.2.1 requires of an `http` URI.
    /// - Parameter trimmingBlanks: spaces and tabs at the end are not part of it (a header
    ///   field's value, whose blanks MHD keeps).
    private static func isHostAndPort(_ authority: Substring.UTF8View, trimmingBlanks: Bool = false) -> Bool {
        // Read in place: this runs on every request's Host, and walking a UTF-8 view index by
        // index cost ~1,800 instructions for `127.0.0.1:8080`.
        authority.withContiguousStorageIfAvailable { isHostAndPort($0, trimmingBlanks: trimmingBlanks) }
            ?? Array(authority).withUnsafeBufferPointer { isHostAndPort($0, trimmingBlanks: trimmingBlanks) }
    }

    private static func isHostAndPort(_ bytes: UnsafeBufferPointer<UInt8>, trimmingBlanks: Bool) -> Bool {
        var end = bytes.count
        while trimmingBlanks, end > 0, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        var index = 0
        if end > 0, bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes[..<end].firstIndex(of: UInt8(ascii: "]")) else { return false }
            let address = UnsafeBufferPointer(rebasing: bytes[1..<close])
            guard address.allSatisfy(isIPv6Byte), isIPv6Address(address) else { return false }
            index = close + 1
        } else {
            // Labels between dots, none empty (`.`, `..x`, `a..b` name no host), checked in the
            // same pass as the bytes.
            guard end > 0, bytes[0] != UInt8(ascii: "."), bytes[0] != UInt8(ascii: ":") else { return false }
            var previous: UInt8 = 0
            while index < end, bytes[index] != UInt8(ascii: ":") {
                let byte = bytes[index]
                guard isNameByte(byte), !(byte == UInt8(ascii: ".") && previous == byte) else { return false }
                previous = byte
                index += 1
            }
        }
        // RFC 3986 allows an empty port (`host:`), which means the scheme's default.
        guard index < end else { return true }
        guard bytes[index] == UInt8(ascii: ":"), end - index - 1 <= 5 else { return false }
        var number = 0
        for digit in bytes[(index + 1)..<end] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return false }
            number = number * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return number <= 65535
    }

    /// Whether `address` (its bytes already hex digits, colons and dots) is an IPv6 address as the
    /// C library reads one: `[:]` or `[1::2::3]` is not.
    private static func isIPv6Address(_ address: UnsafeBufferPointer<UInt8>) -> Bool {
        // The longest text form, `ffff:…:255.255.255.255`, is 45 bytes.
        guard address.count <= 45 else { return false }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 46) { text in
            guard let base = text.baseAddress else { return false }
            for (offset, byte) in address.enumerated() { base[offset] = CChar(bitPattern: byte) }
            base[address.count] = 0
            var parsed = in6_addr()
            return inet_pton(AF_INET6, base, &parsed) == 1
        }
    }

    /// A byte of a host name or IPv4 address: RFC 3986's unreserved characters.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte of an IPv6 address between brackets: hex digits, colons, and the dots of an IPv4
    /// tail (`::ffff:127.0.0.1`). A zone (`%25eth0`) or an `IPvFuture` is refused.
    private static func isIPv6Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: ":"), UInt8(ascii: "."):
            true
        default:
            false
        }
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

/// What ``FramingFault/absoluteFormPath(_:)`` makes of a target in absolute-form.
package enum AbsoluteTarget: Equatable, Sendable {
    /// The path to route.
    case path(String)
    /// The authority is not a plain `host[:port]`.
    case refused(FramingFault)
}
