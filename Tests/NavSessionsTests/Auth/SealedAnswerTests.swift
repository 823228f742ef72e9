import NavJSON
import Testing

@testable import NavSessions
@testable import NavTestSupport

/// The sealed answers to keyed creates (``SealedAnswer``): opened only by the same key and request,
/// never holding the body or the key in the clear, and refused when altered.
@Suite struct SealedAnswerTests {
    let body = Array(#"{"id":"0123","token":"f00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"}"#.utf8)
    let fingerprint = SHA256.hash(Array("POST /v1/sessions\n\0\n{}".utf8))

    @Test func theSameKeyAndRequestOpenWhatWasSealed() throws {
        let sealed = try #require(SealedAnswer.seal(body, key: "retry-1", fingerprint: fingerprint))
        #expect(SealedAnswer.open(sealed, key: "retry-1", fingerprint: fingerprint) == body)
        // Nothing of the body in the clear (the text is hex), and a fresh nonce each time.
        #expect(!String(decoding: sealed, as: UTF8.self).contains("f00dfeed"))
        #expect(SealedAnswer.seal(body, key: "retry-1", fingerprint: fingerprint) != sealed)
        #expect(
            SealedAnswer.open(try #require(SealedAnswer.seal([], key: "k", fingerprint: fingerprint)), key: "k", fingerprint: fingerprint)
                == [])
    }

    @Test func anotherKeyOrRequestOrAnAlteredTextOpensNothing() throws {
        let sealed = try #require(SealedAnswer.seal(body, key: "retry-1", fingerprint: fingerprint))
        #expect(SealedAnswer.open(sealed, key: "retry-2", fingerprint: fingerprint) == nil)
        #expect(SealedAnswer.open(sealed, key: "retry-1", fingerprint: SHA256.hash(Array("other".utf8))) == nil)
        for index in [0, 30, sealed.count - 1] {
            var altered = sealed
            altered[index] = altered[index] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            #expect(SealedAnswer.open(altered, key: "retry-1", fingerprint: fingerprint) == nil, "byte \(index)")
        }
        #expect(SealedAnswer.open(Array(sealed.prefix(40)), key: "retry-1", fingerprint: fingerprint) == nil)
        #expect(SealedAnswer.open(Array("not hex".utf8), key: "retry-1", fingerprint: fingerprint) == nil)
    }

    @Test func theStoreKeyHidesTheIdempotencyKey() {
        let stored = SealedAnswer.storeKey("my-secret-retry-key")
        #expect(stored.hasPrefix("create ") && !stored.contains("my-secret"))
        #expect(stored == SealedAnswer.storeKey("my-secret-retry-key"))
        #expect(stored != SealedAnswer.storeKey("my-secret-retry-kez"))
    }
}
