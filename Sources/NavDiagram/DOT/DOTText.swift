/// Text made safe for a DOT double-quoted string (Graphviz): IDs and attribute values.
enum DOTText {
    /// `text` between double quotes, with `"` and `\` escaped (so that Graphviz reads no escape
    /// sequence such as `\n` or `\N` in it) and every control character replaced by U+FFFD (a
    /// raw line break would be kept in a label; a control character may not render at all).
    static func quoted(_ text: String) -> String {
        "\"" + escaped(text) + "\""
    }

    /// `text` escaped for the inside of a double-quoted string, without the quotes.
    static func escaped(_ text: String) -> String {
        TextEscaping.escaped(text) { scalar in
            switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            default: nil
            }
        }
    }

    /// Lines of a label: each escaped, joined by DOT's centred line break `\n`.
    static func label(_ lines: [String]) -> String {
        "\"" + lines.map(escaped).joined(separator: "\\n") + "\""
    }
}
