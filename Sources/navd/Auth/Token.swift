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

    /// The token of an `Authorization: Bearer …` header, if there is one.
    static func bearer(in headers: HTTPHeaders) -> String? {
        guard let value = headers["authorization"] else { return nil }
        var bytes = value.utf8[...]
        bytes = bytes.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let scheme = bytes.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard scheme.count == 6, zip(scheme, "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        var token = bytes.dropFirst(6).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        while let last = token.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { token = token.dropLast() }
        guard !token.isEmpty else { return nil }
        return String(Substring(token))
    }
}
