/// Appending text to a byte buffer as plain copies of its UTF-8 storage.
///
/// `append(contentsOf: text.utf8)` copies through the generic collection path (about 170
/// instructions a call, most of a log line's cost); these copy a literal's bytes or a native
/// string's contiguous storage with one `memcpy`.
extension Array where Element == UInt8 {
    @inline(__always)
    package mutating func appendLiteral(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    package mutating func appendUTF8(_ text: String) {
        text.withUTF8Bytes { append(contentsOf: $0) }
    }

    /// The decimal digits of a number, zero-padded to `width` digits; a negative number is
    /// written as 0 (log lines and timestamps only count up).
    package mutating func appendDecimal(_ number: Int, width: Int = 1) {
        let value = UInt(Swift.max(0, number))
        let digits = DecimalDigits.count(value)
        let padding = Swift.max(0, width - digits)
        let start = count
        append(contentsOf: repeatElement(UInt8(ascii: "0"), count: padding + digits))
        withUnsafeMutableBufferPointer { DecimalDigits.write(value, digits: digits, into: $0, at: start + padding) }
    }
}

extension String {
    /// `prefix`, the decimal digits of `number` and `suffix`, written into the string's storage at
    /// once (an ETag, a request id): interpolation appends piece by piece.
    package init(_ prefix: String, decimal number: UInt64, _ suffix: StaticString = "") {
        let magnitude = UInt(number)
        let count = DecimalDigits.count(magnitude)
        var prefix = prefix
        self = prefix.withUTF8 { head in
            String(unsafeUninitializedCapacity: head.count + count + suffix.utf8CodeUnitCount) { buffer in
                var position = 0
                for byte in head {
                    buffer[position] = byte
                    position += 1
                }
                DecimalDigits.write(magnitude, digits: count, into: buffer, at: position)
                position += count
                for byte in UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount) {
                    buffer[position] = byte
                    position += 1
                }
                return position
            }
        }
    }

    /// `"7"`: the entity tag of a version (versions start at 1; a negative one is written as is).
    package static func etag(_ version: Int) -> String {
        version >= 0 ? String("\"", decimal: UInt64(version), "\"") : "\"\(version)\""
    }
}

extension Array where Element == UInt8 {
    /// These bytes in a buffer of their own size, for bytes that are kept (an answer kept for a
    /// retry, a feed record), whose budgets count their bytes: a buffer a writer grew doubles as
    /// it goes, so up to half of it can be room nobody reads, held as long as the bytes are.
    /// Copied only when the room is more than the allocator's rounding (an eighth, and 64
    /// bytes); otherwise these very bytes.
    package func fitted() -> [UInt8] {
        guard capacity > count + count / 8 + 64 else { return self }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }
}
