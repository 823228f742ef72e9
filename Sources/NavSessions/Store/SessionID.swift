/// The one form a session id has: 32 lowercase hex digits (128 random bits, written by
/// `SessionService.newID()`).
///
/// Every way a client's text reaches a session (a route's `{id}`, every store call) checks this
/// form first, so that an id that is not one never reaches a cache key or a C call: `…%00x`,
/// uppercase or a prefix must not name a session through another path than its own id.
package enum SessionID {
    /// Whether `id` is exactly 32 lowercase hex digits.
    @inline(__always)
    package static func isValid(_ id: String) -> Bool {
        value(id) != nil
    }

    /// The 128 bits `id` writes, the first digit highest; `nil` unless `id` is exactly 32
    /// lowercase hex digits.
    package static func value(_ id: String) -> (high: UInt64, low: UInt64)? {
        var id = id
        return id.withUTF8 { bytes -> (high: UInt64, low: UInt64)? in
            guard bytes.count == 32, let base = bytes.baseAddress else { return nil }
            let raw = UnsafeRawPointer(base)
            var digits: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
            for index in 0..<4 {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
                guard let value = value(ofEightDigits: word) else { return nil }
                switch index {
                case 0: digits.0 = value
                case 1: digits.1 = value
                case 2: digits.2 = value
                default: digits.3 = value
                }
            }
            return (UInt64(digits.0) << 32 | UInt64(digits.1), UInt64(digits.2) << 32 | UInt64(digits.3))
        }
    }

    /// Eight lowercase hex digits, read as a little-endian word (the first digit in the low
    /// byte), as their value; `nil` if one byte is anything else (uppercase too, which
    /// `SessionService.newID` never writes). All eight at once: a byte below 0x80 plus
    /// `0x80 - c` has its top bit set exactly when it is at least `c`.
    @inline(__always)
    package static func value(ofEightDigits word: UInt64) -> UInt32? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let tops = ones &* 0x80
        guard word & tops == 0 else { return nil }
        let atLeastZero = (word &+ ones &* (0x80 - 0x30)) & tops
        let pastNine = (word &+ ones &* (0x80 - 0x3A)) & tops
        let atLeastA = (word &+ ones &* (0x80 - 0x61)) & tops
        let pastF = (word &+ ones &* (0x80 - 0x67)) & tops
        guard (atLeastZero & ~pastNine) | (atLeastA & ~pastF) == tops else { return nil }
        // '0'…'9' are 0x30…0x39 and 'a'…'f' 0x61…0x66: the low four bits, plus 9 for a letter (bit 6).
        let nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
        // Neighbouring digits joined, the first the higher: bytes, then 16-bit lanes, then the word.
        let pairs = ((nibbles << 4) | (nibbles >> 8)) & 0x00FF_00FF_00FF_00FF
        let quads = ((pairs << 8) | (pairs >> 16)) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: (quads << 16) | (quads >> 32))
    }

    /// The store error for a call with an id of another form (a caller's bug: routes check first).
    package static func invalid(_ id: String) -> StoreError {
        StoreError(message: "not a session id: \(id.utf8.count) bytes that are not 32 lowercase hex digits")
    }
}
