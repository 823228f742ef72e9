/// Base64 (RFC 4648): §4, padded, for CSP hash sources; §5 base64url without padding, for text
/// that travels in JSON, URLs and headers untouched (confirmation tokens).
package enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafe = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// base64url without padding (RFC 4648 §5).
    package static func encode(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: urlSafe, padded: false)
    }

    /// Base64 with padding (RFC 4648 §4).
    package static func encodeStandard(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: standard, padded: true)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], padded: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                if position <= count {
                    out.append(alphabet[Int(group >> UInt32(18 - 6 * position)) & 63])
                } else if padded {
                    out.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes; `nil` for a character outside the alphabet, padding, or a length
    /// no encoding has.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var out: [UInt8] = []
        var group: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        // A lone sixth of a byte is no encoding; leftover bits must be zero.
        guard bits < 6, group & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
