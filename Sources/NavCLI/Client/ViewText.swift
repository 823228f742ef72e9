import NavJSON

/// The CLI driver's human output: a session view as a header, the stage as an indented tree and
/// the top screen's actions; events as a list (docs/guide.md, "The CLI driver").
///
/// The tree follows the stage's structure: a pushed screen stays at its stack's level, a modal
/// (`!`) is indented under the screen it covers, a tab (`#`) under its tab bar, whose line lists
/// the tabs (`*` on the selected one) and is followed by the stacks its other tabs saved. The top
/// screen is marked `← top`.
enum ViewText {
    static func view(_ view: JSONValue) -> String {
        var lines: [String] = []
        let graph = view["graph"]
        let graphText = "\(graph?["name"]?.stringValue ?? "?") v\(graph?["version"]?.intValue.map(String.init) ?? "?")"
        lines.append(
            "session \(view["id"]?.stringValue ?? "?")  graph \(graphText)  version \(view["version"]?.intValue.map(String.init) ?? "?")")
        lines.append("path \(view["path"]?.stringValue ?? "")")
        let screens = view["screens"]?.arrayValue ?? []
        var level = 0
        var levels: [Int] = []
        for (index, screen) in screens.enumerated() {
            switch screen["segue"]?.stringValue {
            case "!" where index > 0: level = levels[index - 1] + 1
            case "#" where index > 0: level = levels[index - 1] + 1
            default: level = index > 0 ? levels[index - 1] : 0
            }
            levels.append(level)
            lines.append(line(screen, level: level, top: index == screens.count - 1))
            if let tabs = screen["tabs"], let saved = tabs["saved"]?.objectValue {
                for name in saved.keys.sorted() {
                    for (position, savedScreen) in (saved[name]?.arrayValue ?? []).enumerated() {
                        lines.append(line(savedScreen, level: level + 1, top: false) + (position == 0 ? "  (saved tab)" : "  (saved)"))
                    }
                }
            }
        }
        if let actions = view["actions"] {
            lines.append(Self.actions(actions))
        }
        if let pending = view["pending"]?.stringValue { lines.append("pending \(pending)") }
        return lines.joined(separator: "\n")
    }

    /// `  / list_news(category=0)  e2`, with the tab bar's tabs, a modal's own navigation
    /// container, non-empty state, and the top mark.
    private static func line(_ screen: JSONValue, level: Int, top: Bool) -> String {
        let segue = screen["segue"]?.stringValue ?? "/"
        var text = String(repeating: "  ", count: level + 1) + segue + " " + (screen["scene"]?.stringValue ?? "?")
        text += params(screen["params"])
        text += "  " + (screen["id"]?.stringValue ?? "")
        if segue == "!", screen["container"]?.stringValue == "navigation" { text += "  [navigation]" }
        if let tabs = screen["tabs"], let selected = tabs["selected"]?.stringValue {
            let saved = tabs["saved"]?.objectValue?.keys.sorted() ?? []
            text += "  tab bar on \(selected)" + (saved.isEmpty ? "" : ", saved: " + saved.joined(separator: " "))
        }
        if let state = screen["state"], state != .object([:]) { text += "  state " + compact(state) }
        if top { text += "  ← top" }
        return text
    }

    private static func params(_ value: JSONValue?) -> String {
        guard let members = value?.objectValue, !members.isEmpty else { return "" }
        let pairs = members.keys.sorted().map { key in
            let value =
                members[key].map { member -> String in
                    if case .string(let text) = member { return text }
                    return compact(member)
                } ?? ""
            return "\(key)=\(value)"
        }
        return "(" + pairs.joined(separator: ",") + ")"
    }

    /// `actions: links coupons, news(category) · exit · back 1`.
    static func actions(_ actions: JSONValue) -> String {
        let links = (actions["links"]?.arrayValue ?? []).map { link -> String in
            let name = link["name"]?.stringValue ?? "?"
            let params = (link["params"]?.arrayValue ?? []).compactMap(\.stringValue)
            return params.isEmpty ? name : "\(name)(\(params.joined(separator: ",")))"
        }
        var parts = ["links " + (links.isEmpty ? "none" : links.joined(separator: ", "))]
        if actions["exit"]?.boolValue == true { parts.append("exit") }
        if let back = actions["back"]?.intValue, back > 0 { parts.append("back \(back)") }
        return "actions: " + parts.joined(separator: " · ")
    }

    /// One line per event: `  7  awake            list_news  e2`.
    static func events(_ events: [JSONValue]) -> String {
        events.map(event).joined(separator: "\n")
    }

    static func event(_ event: JSONValue) -> String {
        let seq = event["seq"]?.intValue.map(String.init) ?? "?"
        let type = event["type"]?.stringValue ?? "?"
        var text = "  " + String(repeating: " ", count: max(0, 4 - seq.count)) + seq + "  " + type
        text += String(repeating: " ", count: max(1, 16 - type.count))
        if let from = event["from"]?.stringValue, let to = event["to"]?.stringValue {
            text += "\(from.isEmpty ? "(none)" : from) → \(to)"
        } else if let scene = event["scene"]?.stringValue {
            text += scene + "  " + (event["screen"]?.stringValue ?? "")
        }
        // Fields of the later event types, in the detail column when there is no scene.
        func append(_ detail: String) { text += (text.last == " " ? "" : "  ") + detail }
        for key in ["keys", "command", "value", "fromVersion", "toVersion"] {
            if let value = event[key] { append("\(key) \(compact(value))") }
        }
        if type == "result", let from = event["from"]?.stringValue { append("from \(from)") }
        return text.trimmingTrailingSpaces
    }

    static func compact(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.write(value)
        return String(decoding: writer.finish(), as: UTF8.self)
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
