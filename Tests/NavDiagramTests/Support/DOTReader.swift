/// Reads back what ``DOTRenderer`` writes, one statement a line, as Graphviz would: node
/// statements `"ID" [attrs];` and edge statements `"FROM" -> "TO" [attrs];`, with quoted
/// strings unescaped (`\"`, `\\`) and label line breaks (`\n`) read as line feeds.
struct DOTReader {
    struct Statement: Equatable {
        var ids: [String]
        var attributes: [String: String]
    }

    var nodes: [Statement] = []
    var edges: [Statement] = []
    /// Lines that are neither a statement, a comment, a default nor a brace.
    var unreadable: [String] = []

    init(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("//") || trimmed.hasPrefix("graph [") || trimmed.hasPrefix("node [") || trimmed.hasPrefix("edge [")
                || trimmed == "}" || trimmed.hasPrefix("digraph ")
            {
                continue
            }
            guard let tokens = Self.tokens(String(trimmed)), let statement = Self.statement(tokens) else {
                unreadable.append(line)
                continue
            }
            if statement.ids.count == 2 { edges.append(statement) } else { nodes.append(statement) }
        }
    }

    enum Token: Equatable {
        case quoted(String)
        case word(String)
        case symbol(Character)
    }

    /// The tokens of a line; `nil` when a quoted string is not closed.
    static func tokens(_ line: String) -> [Token]? {
        var tokens: [Token] = []
        var characters = Array(line)[...]
        while let first = characters.first {
            characters = characters.dropFirst()
            switch first {
            case " ": continue
            case "\"":
                var value = ""
                var closed = false
                while let next = characters.first {
                    characters = characters.dropFirst()
                    if next == "\"" {
                        closed = true
                        break
                    }
                    if next == "\\", let escaped = characters.first {
                        characters = characters.dropFirst()
                        switch escaped {
                        case "n": value.append("\n")
                        default: value.append(escaped)
                        }
                    } else {
                        value.append(next)
                    }
                }
                guard closed else { return nil }
                tokens.append(.quoted(value))
            case "[", "]", ",", ";", "=":
                tokens.append(.symbol(first))
            case "-" where characters.first == ">":
                characters = characters.dropFirst()
                tokens.append(.word("->"))
            default:
                var word = String(first)
                while let next = characters.first, next.isLetter || next.isNumber || next == "_" || next == "." {
                    word.append(next)
                    characters = characters.dropFirst()
                }
                tokens.append(.word(word))
            }
        }
        return tokens
    }

    static func statement(_ tokens: [Token]) -> Statement? {
        var rest = tokens[...]
        var ids: [String] = []
        guard case .quoted(let first)? = rest.popFirst() else { return nil }
        ids.append(first)
        if rest.first == .word("->") {
            rest = rest.dropFirst()
            guard case .quoted(let second)? = rest.popFirst() else { return nil }
            ids.append(second)
        }
        guard rest.popFirst() == .symbol("["), rest.popLast() == .symbol(";"), rest.popLast() == .symbol("]") else { return nil }
        var attributes: [String: String] = [:]
        while !rest.isEmpty {
            guard case .word(let key)? = rest.popFirst(), rest.popFirst() == .symbol("="), case .quoted(let value)? = rest.popFirst() else {
                return nil
            }
            attributes[key] = value
            if !rest.isEmpty, rest.popFirst() != .symbol(",") { return nil }
        }
        return Statement(ids: ids, attributes: attributes)
    }
}
