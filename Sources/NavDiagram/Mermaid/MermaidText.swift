/// Text made safe for a Mermaid flowchart: node ids and quoted labels.
enum MermaidText {
    /// The node id of a scene: `s_` and the name, with `_` written `__`, `.` `_o`, `-` `_h` and
    /// any other character `_uHEX_`. The prefix keeps ids off Mermaid's keywords (`end`,
    /// `graph`, `subgraph`, `style`, …) and off arrow heads (`o`, `x` after `--`); the escapes
    /// keep two scene names from sharing an id.
    static func nodeID(_ scene: String) -> String {
        var id = "s_"
        for scalar in scene.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9": id.unicodeScalars.append(scalar)
            case "_": id += "__"
            case ".": id += "_o"
            case "-": id += "_h"
            default: id += "_u" + String(scalar.value, radix: 16) + "_"
            }
        }
        return id
    }

    /// The id of the node global links leave from: not `s_…`, so no scene has it.
    static let anyScreenID = "any_screen"

    /// Lines of a label, each escaped, joined by `<br/>`, between double quotes.
    static func label(_ lines: [String]) -> String {
        "\"" + lines.map(escaped).joined(separator: "<br/>") + "\""
    }

    /// `text` for the inside of a quoted label: `"` as `#quot;`, and `#` `&` `<` `>` `|` and
    /// the backtick as entity codes too (`#` starts Mermaid's entity codes, `<` would be read
    /// as HTML, `|` ends an edge label, a backtick opens a Markdown string); every control
    /// character replaced by U+FFFD (a line break would end the statement).
    static func escaped(_ text: String) -> String {
        TextEscaping.escaped(text) { scalar in
            switch scalar {
            case "\"": "#quot;"
            case "#": "#35;"
            case "&": "#amp;"
            case "<": "#lt;"
            case ">": "#gt;"
            case "|": "#124;"
            case "`": "#96;"
            default: nil
            }
        }
    }

    /// `text` for a `%%` comment: on one line.
    static func comment(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }
}
