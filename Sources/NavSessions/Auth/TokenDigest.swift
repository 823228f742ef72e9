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

    /// From a digest's 32 bytes as libcrypto writes them (no byte array on the way).
    init(digest: UnsafeBufferPointer<UInt8>) {
        func word(_ start: Int) -> UInt64 {
            var word: UInt64 = 0
            for index in start..<start + 8 { word = word << 8 | UInt64(digest[index]) }
            return word
        }
        (a, b, c, d) = (word(0), word(8), word(16), word(24))
    }

    package var bytes: [UInt8] {
        [a, b, c, d].flatMap { word in (0..<8).reversed().map { UInt8(truncatingIfNeeded: word >> UInt64($0 * 8)) } }
    }

    /// Equal digests, compared without branching on their contents.
    package func matches(_ other: TokenDigest) -> Bool {
        ((a ^ other.a) | (b ^ other.b) | (c ^ other.c) | (d ^ other.d)) == 0
    }
}
