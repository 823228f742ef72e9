/// Appending text to a byte buffer as plain copies of its UTF-8 storage.
///
/// `append(contentsOf: text.utf8)` copies through the generic collection path (about 170
/// instructions a call, most of a log line's cost); these copy a literal's bytes or a native
/// string's contiguous storage with one `memcpy`.
extension Array where Element == UInt8 {
    @inline(__always)
    mutating func appendLiteral(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    mutating func appendUTF8(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if copied == nil { append(contentsOf: text.utf8) }
    }
}

extension String {
    /// `prefix`, the decimal digits of `number` and `suffix`, written into the string's storage at
    /// once (an ETag, a request id): interpolation appends piece by piece.
    init(_ prefix: String, decimal number: UInt64, _ suffix: StaticString = "") {
        var digits: (UInt64, Int) = (number, 1)
        while digits.0 >= 10 {
            digits.0 /= 10
            digits.1 += 1
        }
        let count = digits.1
        var prefix = prefix
        self = prefix.withUTF8 { head in
            String(unsafeUninitializedCapacity: head.count + count + suffix.utf8CodeUnitCount) { buffer in
                var position = 0
                for byte in head {
                    buffer[position] = byte
                    position += 1
                }
                var rest = number
                for offset in stride(from: position + count - 1, through: position, by: -1) {
                    buffer[offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
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
    static func etag(_ version: Int) -> String {
        version >= 0 ? String("\"", decimal: UInt64(version), "\"") : "\"\(version)\""
    }
}
