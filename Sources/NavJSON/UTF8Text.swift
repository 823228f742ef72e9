/// UTF-8 text to and from bytes, fast for the short ASCII texts names, ids and keys are.

/// `String(decoding: bytes, as: UTF8.self)` — the same string, invalid UTF-8 repaired the same way —
/// made faster for the short ASCII texts paths are built from (names, keys, values, screen ids).
///
/// `String(unsafeUninitializedCapacity:initializingUTF8With:)` builds a text of up to 15 bytes in
/// place as a small string and skips the separate UTF-8 validation pass when it is all ASCII
/// (`String(decoding:as:)` validates first, ~140 instructions a name); anything else is validated
/// and repaired as before.
@inline(__always)
package func utf8String(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    String(unsafeUninitializedCapacity: bytes.count) { buffer in
        let count = min(bytes.count, buffer.count)
        if count > 0, let source = bytes.baseAddress, let target = buffer.baseAddress {
            target.update(from: source, count: count)
        }
        return count
    }
}

extension String {
    /// Calls `body` with the text's UTF-8. A native string's own storage is read in place, from
    /// the borrowed string (`withUTF8` needs a mutable copy of it: a retain and a release); a
    /// string without contiguous UTF-8 is made native first.
    @inlinable @inline(__always)
    package func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        var native = self
        return native.withUTF8(body)
    }
}

extension StringProtocol {
    /// The text without the characters of `set` at either end: `" \t"` for the blanks HTTP
    /// allows around a field value or a list item.
    package func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var slice = self[...]
        while let first = slice.first, characters.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, characters.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
