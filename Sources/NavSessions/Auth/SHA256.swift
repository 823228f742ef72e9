import CSHA256

/// SHA-256 (FIPS 180-4), used to store session tokens only as digests.
///
/// Tokens are 256-bit random values, so a plain digest is enough: there is nothing
/// to brute-force, and no salt or slow hash is needed. Every request that presents a token
/// hashes it (two blocks for a 64-character token), so where the CPU has the x86 SHA
/// extensions the blocks go to `CSHA256` (about 1/10 of the instructions); elsewhere the
/// compression function below is written out eight rounds at a time (the working variables
/// rotate by renaming, not by moving) over a 16-word rolling schedule.
package enum SHA256 {
    /// Whether ``digestWords(_:hardware:)`` uses the CPU's SHA instructions by default.
    static let hardwareAvailable = navd_sha256_hardware_available() == 1

    /// The eight state words of a digest, most significant byte first when written out.
    package typealias Words = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    package static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        let words = digestWords(message)
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3, words.4, words.5, words.6, words.7] {
            for shift in stride(from: 24, through: 0, by: -8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    /// The digest as its eight state words.
    static func digestWords(_ message: some Collection<UInt8>) -> Words {
        if let words = message.withContiguousStorageIfAvailable({ digestWords(UnsafeRawBufferPointer($0)) }) {
            return words
        }
        return Array(message).withUnsafeBytes { digestWords($0) }
    }

    /// - Parameter hardware: use the SHA instructions (only where ``hardwareAvailable``); tests
    ///   compare both ways.
    static func digestWords(_ input: UnsafeRawBufferPointer, hardware: Bool = hardwareAvailable) -> Words {
        var state: Words = (
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
        )
        let whole = input.count / 64 * 64
        compress(&state, UnsafeRawBufferPointer(rebasing: input[0..<whole]), hardware: hardware)
        // The tail, 0x80, zeros and the bit length: one or two more blocks.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
            tail.initialize(repeating: 0)
            let rest = input.count - whole
            for index in 0..<rest { tail[index] = input[whole + index] }
            tail[rest] = 0x80
            let blocks = rest < 56 ? 1 : 2
            let bitLength = UInt64(input.count) &* 8
            for index in 0..<8 { tail[blocks * 64 - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> UInt64(index * 8)) }
            compress(&state, UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(tail)[0..<blocks * 64]), hardware: hardware)
        }
        return state
    }

    /// Whole 64-byte blocks into the state.
    private static func compress(_ state: inout Words, _ blocks: UnsafeRawBufferPointer, hardware: Bool) {
        guard let start = blocks.baseAddress, blocks.count >= 64 else { return }
        if hardware && hardwareAvailable {
            withUnsafeMutableBytes(of: &state) { words in
                guard let words = words.baseAddress?.assumingMemoryBound(to: UInt32.self) else { return }
                navd_sha256_compress_hardware(words, start.assumingMemoryBound(to: UInt8.self), blocks.count / 64)
            }
            return
        }
        var offset = 0
        while offset + 64 <= blocks.count {
            compress(&state, UnsafeRawBufferPointer(start: start + offset, count: 64))
            offset += 64
        }
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// One 64-byte block into the state (FIPS 180-4 §6.2.2).
    private static func compress(_ state: inout Words, _ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { w in
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self))
            }
            var (a, b, c, d, e, f, g, h) = state
            k.withUnsafeBufferPointer { k in
                var t = 0
                while t < 64 {
                    if t >= 16 {
                        for i in t..<t + 8 { w[i & 15] = scheduled(w, i) }
                    }
                    round(a, b, c, &d, e, f, g, &h, k[t] &+ w[t & 15])
                    round(h, a, b, &c, d, e, f, &g, k[t + 1] &+ w[(t + 1) & 15])
                    round(g, h, a, &b, c, d, e, &f, k[t + 2] &+ w[(t + 2) & 15])
                    round(f, g, h, &a, b, c, d, &e, k[t + 3] &+ w[(t + 3) & 15])
                    round(e, f, g, &h, a, b, c, &d, k[t + 4] &+ w[(t + 4) & 15])
                    round(d, e, f, &g, h, a, b, &c, k[t + 5] &+ w[(t + 5) & 15])
                    round(c, d, e, &f, g, h, a, &b, k[t + 6] &+ w[(t + 6) & 15])
                    round(b, c, d, &e, f, g, h, &a, k[t + 7] &+ w[(t + 7) & 15])
                    t += 8
                }
            }
            state = (
                state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h
            )
        }
    }

    /// Schedule word `i` (16 ≤ i < 64) from the 16 before it, kept modulo 16 in `w`.
    @inline(__always)
    private static func scheduled(_ w: UnsafeMutableBufferPointer<UInt32>, _ i: Int) -> UInt32 {
        let w15 = w[(i - 15) & 15]
        let w2 = w[(i - 2) & 15]
        let s0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 &>> 3)
        let s1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 &>> 10)
        return w[i & 15] &+ s0 &+ w[(i - 7) & 15] &+ s1
    }

    /// One round; the caller renames the variables for the next one. `kw` is K[t] + W[t].
    @inline(__always)
    private static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
        _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ kw: UInt32
    ) {
        let t1 = h &+ (e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)) &+ ((e & f) ^ (~e & g)) &+ kw
        let t2 = (a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)) &+ ((a & b) ^ (a & c) ^ (b & c))
        d = d &+ t1
        h = t1 &+ t2
    }
}

extension UInt32 {
    @inline(__always) fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        // Masking shifts: one `ror` instruction, no out-of-range checks.
        (self &>> count) | (self &<< (32 &- count))
    }
}
