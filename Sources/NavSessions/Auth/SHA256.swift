import CLibCrypto

/// SHA-256 (FIPS 180-4) from OpenSSL's libcrypto, which navd links already (libpq needs it, and
/// sealed answers use its AES-GCM): session tokens are stored only as digests, and keys and
/// fingerprints are filed by digest.
///
/// Tokens are 256-bit random values, so a plain digest is enough: there is nothing to
/// brute-force, and no salt or slow hash is needed. Every request that presents a token hashes
/// it (two blocks for a 64-character token), through ``CLibCrypto``'s `navd_sha256`, which
/// cannot fail and allocates nothing (see `shim.h` for why it is not the EVP interface).
package enum SHA256 {
    /// The digest of `message`, 32 bytes.
    package static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        if let digest = message.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(message).withUnsafeBytes { hash($0) }
    }

    /// The digest of the bytes `message`.
    package static func hash(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { digest, initialized in
            navd_sha256(message.baseAddress, message.count, digest.baseAddress)
            initialized = 32
        }
    }

    /// The digest of the bytes `message` as a ``TokenDigest``, with no array on the way.
    package static func tokenDigest(_ message: UnsafeRawBufferPointer) -> TokenDigest {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
            navd_sha256(message.baseAddress, message.count, digest.baseAddress)
            return TokenDigest(digest: UnsafeBufferPointer(digest))
        }
    }
}
