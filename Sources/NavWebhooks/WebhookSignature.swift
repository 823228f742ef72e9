import CLibCrypto
import NavJSON

/// Standard Webhooks signatures: `v1,<base64 of HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`,
/// one per secret, separated by spaces.
package enum WebhookSignature {
    /// The `webhook-signature` header's value for `id`, `timestamp` (seconds) and `body`.
    package static func header(id: String, timestamp: Int64, body: [UInt8], secrets: [[UInt8]]) -> String {
        var content = Array(id.utf8)
        content.append(UInt8(ascii: "."))
        content += String(timestamp).utf8
        content.append(UInt8(ascii: "."))
        content += body
        return secrets.map { "v1," + Base64.encodeStandard(hmacSHA256(key: $0, content)) }.joined(separator: " ")
    }

    /// HMAC-SHA256 of `data` under `key`.
    package static func hmacSHA256(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let done = key.withUnsafeBytes { key in
            data.withUnsafeBytes { data in
                navd_hmac_sha256(key.baseAddress, key.count, data.baseAddress, data.count, &digest)
            }
        }
        // libcrypto fails only without memory; an all-zero signature is then refused by the receiver.
        return done == 1 ? digest : [UInt8](repeating: 0, count: 32)
    }

    /// Standard base64 (RFC 4648, section 4; padding optional) → bytes; nil for anything else.
    package static func decodeBase64(_ text: some StringProtocol) -> [UInt8]? {
        var trimmed = Substring(text)
        while trimmed.hasSuffix("=") { trimmed = trimmed.dropLast() }
        guard text.count - trimmed.count <= 2, !trimmed.contains("-"), !trimmed.contains("_") else { return nil }
        let urlSafe = String(trimmed.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        return Base64.decode(urlSafe)
    }
}
