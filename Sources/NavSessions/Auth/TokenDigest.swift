/// A SHA-256 digest of a bearer token, kept inline (four words) rather than as an array:
/// one allocation less for every session held in memory.
package struct TokenDigest: Sendable, Hashable {
    private var a: UInt64
    private var b: UInt64
    private var c: UInt64
    private var d: UInt64

    /// From 32 bytes; other lengths (a corrupt store row) give a digest no token matches.
    package init(bytes: [UInt8]) {
        var words: [UInt64] = [0, 0, 0, 0]
        if bytes.count == 32 {
            for (index, byte) in bytes.enumerated() { words[index / 8] = words[index / 8] << 8 | UInt64(byte) }
        } else {
            words = [.max, .max, .max, .max]
        }
        (a, b, c, d) = (words[0], words[1], words[2], words[3])
    }

    /// From the eight state words of a SHA-256 digest (no byte array on the way).
    package init(words: SHA256.Words) {
        a = UInt64(words.0) << 32 | UInt64(words.1)
        b = UInt64(words.2) << 32 | UInt64(words.3)
        c = UInt64(words.4) << 32 | UInt64(words.5)
        d = UInt64(words.6) << 32 | UInt64(words.7)
    }

    package var bytes: [UInt8] {
        [a, b, c, d].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> UInt64($0 * 8)) } }
    }

    /// Equal digests, compared without branching on their contents.
    package func matches(_ other: TokenDigest) -> Bool {
        ((a ^ other.a) | (b ^ other.b) | (c ^ other.c) | (d ^ other.d)) == 0
    }
}
