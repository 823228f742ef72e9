import NavJSON

/// Bearer tokens: 256 random bits shown once, kept only as SHA-256 digests, compared in constant time.
package enum Token {
    /// A new token: 32 random bytes from the system's CSPRNG, as 64 lowercase hex digits.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return Hex.string(bytes)
    }

    /// The read-only watch token of the session whose write token has `digest` (docs/design.md, "Auth and tokens"):
    /// derived from the digest, so nothing more is stored and every process of a shared store
    /// derives the same one. It opens the session's view and events, never a change; knowing it
    /// tells nothing of the write token (SHA-256 is one-way), and whoever can read the stored
    /// digests can read the sessions themselves.
    package static func watchToken(for digest: TokenDigest) -> String {
        Hex.string(SHA256.hash(Array("navd watch token\u{0}".utf8) + digest.bytes))
    }

    package static func digest(_ token: String) -> TokenDigest {
        var token = token
        return token.withUTF8 { SHA256.tokenDigest(UnsafeRawBufferPointer($0)) }
    }

    private static let bearerScheme = Array("bearer".utf8)

    /// The digest of the token of an `Authorization: Bearer …` value, if there is one: the
    /// token is hashed where it lies in the value, never copied into a string of its own.
    package static func bearerDigest(authorization: String?) -> TokenDigest? {
        guard var value = authorization else { return nil }
        return value.withUTF8 { bytes -> TokenDigest? in
            guard let token = bearerRange(in: bytes) else { return nil }
            return SHA256.tokenDigest(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[token])))
        }
    }

    /// Where the token is in an `Authorization` value: `Bearer` (any case), blanks, the token,
    /// blanks around the whole allowed.
    private static func bearerRange(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        var end = bytes.count
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        let scheme = bearerScheme
        guard end - start > scheme.count else { return nil }
        for (offset, letter) in scheme.enumerated() where bytes[start + offset] | 0x20 != letter { return nil }
        var tokenStart = start + scheme.count
        guard isBlank(bytes[tokenStart]) else { return nil }
        while tokenStart < end, isBlank(bytes[tokenStart]) { tokenStart += 1 }
        guard tokenStart < end else { return nil }
        return tokenStart..<end
    }
}
