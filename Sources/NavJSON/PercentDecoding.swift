/// `%XX` escapes decoded: the one decoder of path segments (the router), query arguments (the
/// HTTP server) and path values (NavCore's path parser).
package enum PercentDecoding {
    /// `raw` with each `%XX` decoded.
    ///
    /// - Parameter strict: when true, a `%` not followed by two hex digits, or decoded bytes that
    ///   are not UTF-8, give `nil`; when false, such a `%` stays as it is and invalid UTF-8 is
    ///   repaired (U+FFFD), so any bytes give a string.
    ///
    /// Text without escapes takes the fast path for ASCII; decoded text is written straight into
    /// the string's storage, and only text that decodes to something beyond ASCII is decoded a
    /// second time, into an array, to be validated (the string's initialiser repairs invalid
    /// UTF-8 where a strict caller must refuse it).
    package static func decode(_ raw: UnsafeBufferPointer<UInt8>, strict: Bool) -> String? {
        var escaped = false
        var bits: UInt8 = 0
        for byte in raw {
            if byte == UInt8(ascii: "%") { escaped = true }
            bits |= byte
        }
        guard escaped else {
            if bits < 0x80 { return utf8String(raw) }
            return strict ? String(validating: raw, as: UTF8.self) : String(decoding: raw, as: UTF8.self)
        }
        if strict, !escapesAreWellFormed(raw) { return nil }
        var ascii = true
        let text = String(unsafeUninitializedCapacity: raw.count) { buffer in
            let (count, bits) = decode(raw, into: buffer)
            ascii = bits < 0x80
            return count
        }
        if ascii { return text }
        let decoded = [UInt8](unsafeUninitializedCapacity: raw.count) { buffer, count in
            count = decode(raw, into: buffer).count
        }
        return strict ? String(validating: decoded, as: UTF8.self) : String(decoding: decoded, as: UTF8.self)
    }

    /// Whether every `%` in `raw` is followed by two hex digits.
    package static func escapesAreWellFormed(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        var position = 0
        while position < raw.count {
            if raw[position] == UInt8(ascii: "%") {
                guard position + 2 < raw.count, Hex.value(raw[position + 1]) != nil, Hex.value(raw[position + 2]) != nil else {
                    return false
                }
                position += 3
            } else {
                position += 1
            }
        }
        return true
    }

    /// Writes `raw` into `buffer` (at least as long) with each well-formed `%XX` decoded; returns
    /// how many bytes that is and all of them or-ed together (below 0x80 when they are ASCII).
    private static func decode(
        _ raw: UnsafeBufferPointer<UInt8>, into buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> (count: Int, bits: UInt8) {
        var count = 0
        var bits: UInt8 = 0
        var position = 0
        while position < raw.count, count < buffer.count {
            var byte = raw[position]
            position += 1
            if byte == UInt8(ascii: "%"), position + 1 < raw.count, let high = Hex.value(raw[position]),
                let low = Hex.value(raw[position + 1])
            {
                byte = high << 4 | low
                position += 2
            }
            buffer[count] = byte
            bits |= byte
            count += 1
        }
        return (count, bits)
    }
}
