import CLibCrypto
import NavJSON

/// The answer to a create sent with an `Idempotency-Key`, as a store keeps it (docs/design.md, "Idempotency"
///): so that a retry a load balancer sends to another process, or one sent after a
/// restart, replays the session instead of making a second one.
///
/// That answer holds the session's token, which navd never stores (only its digest). So the
/// store gets it sealed (AES-256-GCM) under a key derived from the `Idempotency-Key` and the
/// request's fingerprint, and files it under a digest of the `Idempotency-Key`: the database holds
/// neither the token nor the key that opens it. Whoever sends the same key and request again —
/// the client retrying — opens it, exactly as one process replays the answer from its memory.
package enum SealedAnswer {
    /// Where the store files the answer to a create sent with `key`.
    package static func storeKey(_ key: String) -> String {
        "create " + Hex.string(SHA256.hash(Array("navd create key\u{0}".utf8) + Array(key.utf8)))
    }

    /// How the store files a change's `Idempotency-Key` (after its session's id): SHA-256 of a
    /// label and the key, in hex. The label has no NUL, so that migration 5 of the PostgreSQL
    /// store computes the same digest of the keys it found in the clear.
    package static func changeKeyDigest(_ key: String) -> String {
        Hex.string(SHA256.hash(Array("navd change key ".utf8) + Array(key.utf8)))
    }

    /// `body` sealed, as hex text (the store keeps text): nonce, ciphertext and tag.
    package static func seal(_ body: [UInt8], key: String, fingerprint: [UInt8]) -> [UInt8]? {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<nonceBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        guard let sealed = run(encrypting: true, body, key: derivedKey(key, fingerprint), nonce: nonce, tag: nil) else { return nil }
        return Array(Hex.string(nonce + sealed.output + sealed.tag).utf8)
    }

    /// The body `seal` sealed with the same key and fingerprint; nil when the text was not sealed
    /// so (another request's, or altered).
    package static func open(_ sealed: [UInt8], key: String, fingerprint: [UInt8]) -> [UInt8]? {
        guard let bytes = Hex.bytes(String(decoding: sealed, as: UTF8.self)), bytes.count >= nonceBytes + tagBytes else { return nil }
        let nonce = Array(bytes.prefix(nonceBytes))
        let tag = Array(bytes.suffix(tagBytes))
        let ciphertext = Array(bytes.dropFirst(nonceBytes).dropLast(tagBytes))
        return run(encrypting: false, ciphertext, key: derivedKey(key, fingerprint), nonce: nonce, tag: tag)?.output
    }

    private static let nonceBytes = 12
    private static let tagBytes = 16

    /// The cipher's key: SHA-256 over a label, the fingerprint (32 bytes, so the two cannot run
    /// into each other) and the `Idempotency-Key`.
    private static func derivedKey(_ key: String, _ fingerprint: [UInt8]) -> [UInt8] {
        SHA256.hash(Array("navd sealed answer\u{0}".utf8) + fingerprint + Array(key.utf8))
    }

    /// AES-256-GCM one way or the other: with `tag` nil it encrypts and returns the tag, else it
    /// decrypts and checks `tag` (nil when it does not match).
    private static func run(encrypting: Bool, _ input: [UInt8], key: [UInt8], nonce: [UInt8], tag: [UInt8]?) -> (
        output: [UInt8], tag: [UInt8]
    )? {
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var tagBytes = tag ?? [UInt8](repeating: 0, count: Self.tagBytes)
        var written: Int32 = 0
        var finished: Int32 = 0
        let ok = key.withUnsafeBufferPointer { key in
            nonce.withUnsafeBufferPointer { nonce in
                input.withUnsafeBufferPointer { input in
                    output.withUnsafeMutableBufferPointer { output -> Bool in
                        guard let out = output.baseAddress else { return false }
                        // An empty input has no base address; OpenSSL takes a zero length with any pointer.
                        let inPointer = input.baseAddress ?? UnsafePointer(out)
                        if encrypting {
                            guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key.baseAddress, nonce.baseAddress) == 1,
                                EVP_EncryptUpdate(context, out, &written, inPointer, Int32(input.count)) == 1,
                                EVP_EncryptFinal_ex(context, out + Int(written), &finished) == 1
                            else { return false }
                            return navd_gcm_get_tag(context, &tagBytes) == 1
                        }
                        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key.baseAddress, nonce.baseAddress) == 1,
                            EVP_DecryptUpdate(context, out, &written, inPointer, Int32(input.count)) == 1,
                            navd_gcm_set_tag(context, &tagBytes) == 1
                        else { return false }
                        return EVP_DecryptFinal_ex(context, out + Int(written), &finished) == 1
                    }
                }
            }
        }
        guard ok else { return nil }
        return (Array(output.prefix(Int(written + finished))), tagBytes)
    }
}
