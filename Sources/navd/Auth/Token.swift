/// Bearer tokens: 256 random bits shown once, kept only as SHA-256 digests, compared in constant time.
enum Token {
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

    static func digest(_ token: String) -> TokenDigest {
        var token = token
        return token.withUTF8 { TokenDigest(words: SHA256.digestWords(UnsafeRawBufferPointer($0))) }
    }

    /// Whether `token` hashes to `expected`, compared in constant time.
    static func matches(_ token: String, digest expected: TokenDigest) -> Bool {
        digest(token).matches(expected)
    }

    private static let bearerScheme = Array("bearer".utf8)

    /// The token of an `Authorization: Bearer …` header, if there is one.
    static func bearer(in headers: HTTPHeaders) -> String? {
        guard var value = headers["authorization"] else { return nil }
        return value.withUTF8 { bytes -> String? in
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var start = 0
            var end = bytes.count
            while start < end, isBlank(bytes[start]) { start += 1 }
            while end > start, isBlank(bytes[end - 1]) { end -= 1 }
            // "Bearer", case-insensitively, then blanks, then the token.
            let scheme = bearerScheme
            guard end - start > scheme.count else { return nil }
            for (offset, letter) in scheme.enumerated() where bytes[start + offset] | 0x20 != letter { return nil }
            var tokenStart = start + scheme.count
            guard isBlank(bytes[tokenStart]) else { return nil }
            while tokenStart < end, isBlank(bytes[tokenStart]) { tokenStart += 1 }
            guard tokenStart < end else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[tokenStart..<end]), as: UTF8.self)
        }
    }
}
