/// The one loop behind each diagram format's string escaping: every scalar the format names is
/// replaced by its escape, every control character by U+FFFD (a line break would end a
/// statement in DOT and in Mermaid), and the rest kept.
enum TextEscaping {
    static func escaped(_ text: String, _ escape: (Unicode.Scalar) -> String?) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if let replacement = escape(scalar) {
                result += replacement
            } else if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\u{FFFD}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
