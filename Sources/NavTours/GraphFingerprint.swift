import NavJSON

/// A short name for one graph document's content: FNV-1a (64 bits) of its compact JSON, keys
/// sorted (NavJSON's writer), so the same document read from JSON or YAML, or served back by
/// `GET /v1/graphs/{name}`, gives the same text. It tells versions apart; it is no defence against
/// a document made to collide.
public enum GraphFingerprint {
    public static func of(_ document: JSONValue) -> String {
        var writer = JSONWriter()
        writer.write(document)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in writer.finish() {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return "fnv1a64:" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}
