import NavJSON
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// FIPS 180-4 test vectors, and lengths around the padding boundaries against a second opinion
/// (Python's hashlib).
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (String(repeating: "a", count: 1000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    ])
    func knownDigests(_ message: String, _ digest: String) {
        #expect(Hex.string(SHA256.hash(Array(message.utf8))) == digest)
    }

    /// Lengths on both sides of one and two padding blocks (digests from Python's hashlib).
    @Test(arguments: [
        (55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"),
        (56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"),
        (63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"),
        (64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"),
        (65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"),
        (119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"),
        (120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"),
        (128, "24da1b81d0b16df6428eee73c69fcb2a93c76bc6df706f0c6670fe6bfe800464")
    ])
    func paddingBoundaries(_ length: Int, _ digest: String) {
        #expect(Hex.string(SHA256.hash([UInt8](repeating: UInt8(ascii: "x"), count: length))) == digest)
    }

    /// A digest made from the state words (requests) equals one read back from its bytes (stores).
    @Test func digestsFromWordsAndFromBytesAgree() {
        for length in [0, 1, 55, 56, 63, 64, 65, 100, 128, 200] {
            let message = String((0..<length).map { _ in "0123456789abcdef".randomElement() ?? "0" })
            let fromBytes = TokenDigest(bytes: SHA256.hash(Array(message.utf8)))
            #expect(Token.digest(message) == fromBytes)
            #expect(Token.digest(message).bytes == SHA256.hash(Array(message.utf8)))
        }
    }

    /// A token's digest made where it lies in a header (no array) equals its digest as bytes,
    /// on every length through four blocks.
    @Test func aDigestInPlaceEqualsTheDigestAsBytes() {
        var generator = SplitMix64(seed: 0x5348_4132)
        for length in 0...300 {
            let message = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let inPlace = message.withUnsafeBytes { SHA256.tokenDigest($0) }
            #expect(inPlace == TokenDigest(bytes: SHA256.hash(message)), "length \(length)")
        }
    }

    @Test func tokensMatchOnlyThemselves() {
        let token = Token.generate()
        #expect(token.utf8.count == 64)
        #expect(Token.digest(token).matches(Token.digest(token)))
        #expect(!Token.digest(token + "x").matches(Token.digest(token)))
        #expect(!Token.digest(Token.generate()).matches(Token.digest(token)))
    }

    @Test(
        arguments: [
            ("Bearer abc", "abc"), ("bearer  abc ", "abc"), ("BEARER\tabc", "abc"), (" Bearer abc", "abc"),
            ("Basic abc", nil), ("Bearer", nil), ("Bearer   ", nil), ("Bearerabc", nil), ("", nil)
        ] as [(String, String?)])
    func bearerTokens(_ header: String, _ token: String?) {
        #expect(Token.bearerDigest(authorization: header) == token.map(Token.digest))
    }

    @Test func hexRoundTripsAndRefusesNonHex() {
        let bytes: [UInt8] = [0, 1, 0x7F, 0x80, 0xAB, 0xFF]
        #expect(Hex.string(bytes) == "00017f80abff")
        #expect(Hex.bytes("00017f80abff") == bytes)
        #expect(Hex.bytes("00017F80ABFF") == bytes)
        #expect(Hex.bytes("abc") == nil)
        #expect(Hex.bytes("zz") == nil)
    }
}
