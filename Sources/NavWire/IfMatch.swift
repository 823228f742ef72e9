import NavJSON

/// An `If-Match` precondition (RFC 9110 §13.1.1): `*`, or a list of entity tags of which any
/// one matching is a match.
///
/// navd's entity tags are session versions written as strong tags (`"3"`). Comparison is
/// strong: a weak tag (`W/"3"`) never matches, and neither does a tag that is not the decimal
/// text of a version (`"03"`, `"x"`). A field value that is not a list of entity tags can
/// never match either, so a request carrying one is refused with 412 and changes nothing.
package struct IfMatch: Sendable, Equatable {
    /// `*`: any current version matches (the session exists).
    package var any: Bool
    /// The versions named by the list's strong tags.
    package var versions: [Int]

    /// Whether a session at `version` satisfies the precondition.
    package func matches(_ version: Int) -> Bool {
        any || versions.contains(version)
    }

    /// Parses a field value; repeated fields arrive joined with `", "`, which is the same list.
    package init(_ value: String) {
        any = false
        versions = []
        var value = value
        // A malformed list matches nothing: forget what was read before the fault.
        if !value.withUTF8({ parse($0) }) { versions = [] }
    }

    /// Reads `#entity-tag` or `*`; false on a malformed value.
    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        var end = bytes.count
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        if end - start == 1, bytes[start] == UInt8(ascii: "*") {
            any = true
            return true
        }
        var index = start
        var tags = 0
        while index < end {
            // Empty list elements (`"1", , "2"`) are allowed and skipped (RFC 9110 §5.6.1.2).
            if bytes[index] == UInt8(ascii: ",") || isBlank(bytes[index]) {
                index += 1
                continue
            }
            var weak = false
            if bytes[index] == UInt8(ascii: "W"), index + 1 < end, bytes[index + 1] == UInt8(ascii: "/") {
                weak = true
                index += 2
            }
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { return false }
            index += 1
            let opaqueStart = index
            // etagc: %x21 / %x23-7E / obs-text; no `"` and no control characters.
            while index < end, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] >= 0x21, bytes[index] != 0x7F else { return false }
                index += 1
            }
            guard index < end else { return false }
            let opaque = UnsafeBufferPointer(rebasing: bytes[opaqueStart..<index])
            index += 1
            // After a tag: blanks, then a comma or the end.
            while index < end, isBlank(bytes[index]) { index += 1 }
            guard index == end || bytes[index] == UInt8(ascii: ",") else { return false }
            tags += 1
            // The way navd writes a version: decimal digits, no sign, no leading zero.
            if !weak, let version = DecimalDigits.parse(opaque, leadingZeros: false) { versions.append(version) }
        }
        return tags > 0
    }
}
