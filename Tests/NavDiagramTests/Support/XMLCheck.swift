/// A small XML well-formedness check, enough for the SVG navd writes (no DTD, no CDATA, no
/// processing instructions): elements nest and close in order, names are names, attribute
/// values are quoted and unique per element, `&` starts only a known or numeric reference,
/// `<` appears only as markup, and every character is one XML 1.0 allows.
enum XMLCheck {
    /// The problems found; empty for a well-formed document with one root element.
    static func problems(_ text: String) -> [String] {
        let characters = Array(text.unicodeScalars)
        var index = 0
        var open: [String] = []
        var roots = 0
        var problems: [String] = []

        func isNameStart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c == "_" || c == ":" }
        func isName(_ c: Unicode.Scalar) -> Bool { isNameStart(c) || c.properties.numericType != nil || c == "-" || c == "." }
        func name() -> String? {
            guard index < characters.count, isNameStart(characters[index]) else { return nil }
            var result = ""
            while index < characters.count, isName(characters[index]) {
                result.unicodeScalars.append(characters[index])
                index += 1
            }
            return result
        }
        func skipSpace() {
            while index < characters.count, [" ", "\n", "\t", "\r"].contains(characters[index]) { index += 1 }
        }
        /// A reference after `&`, up to its `;`.
        func reference() -> Bool {
            var body = ""
            while index < characters.count, characters[index] != ";" {
                body.unicodeScalars.append(characters[index])
                index += 1
                if body.unicodeScalars.count > 10 { return false }
            }
            guard index < characters.count else { return false }
            index += 1
            if ["amp", "lt", "gt", "quot", "apos"].contains(body) { return true }
            if body.hasPrefix("#x") { return UInt32(body.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init) != nil }
            if body.hasPrefix("#") { return UInt32(body.dropFirst()).flatMap(Unicode.Scalar.init) != nil }
            return false
        }
        func allowed(_ c: Unicode.Scalar) -> Bool {
            let value = c.value
            return value == 0x9 || value == 0xA || value == 0xD || (value >= 0x20 && value != 0xFFFE && value != 0xFFFF)
        }

        while index < characters.count, problems.isEmpty {
            let c = characters[index]
            guard allowed(c) else {
                problems.append("character U+\(String(c.value, radix: 16)) at \(index) is not allowed")
                break
            }
            if c == "&" {
                index += 1
                if !reference() { problems.append("a bad reference near \(index)") }
                continue
            }
            guard c == "<" else {
                if open.isEmpty, ![" ", "\n", "\t", "\r"].contains(c) { problems.append("text outside the root at \(index)") }
                index += 1
                continue
            }
            index += 1
            if index < characters.count, characters[index] == "/" {
                index += 1
                guard let closing = name() else {
                    problems.append("a bad closing tag at \(index)")
                    break
                }
                skipSpace()
                guard index < characters.count, characters[index] == ">" else {
                    problems.append("an unterminated closing tag at \(index)")
                    break
                }
                index += 1
                guard open.last == closing else {
                    problems.append("</\(closing)> closes <\(open.last ?? "nothing")>")
                    break
                }
                open.removeLast()
                continue
            }
            guard let element = name() else {
                problems.append("a bad element name at \(index)")
                break
            }
            if open.isEmpty {
                roots += 1
                if roots > 1 { problems.append("a second root element <\(element)>") }
            }
            var attributes: Set<String> = []
            while true {
                let before = index
                skipSpace()
                guard index < characters.count else {
                    problems.append("an unterminated tag <\(element)>")
                    break
                }
                if characters[index] == "/" {
                    index += 1
                    if index < characters.count, characters[index] == ">" {
                        index += 1
                    } else {
                        problems.append("a bad empty-element tag <\(element)>")
                    }
                    break
                }
                if characters[index] == ">" {
                    index += 1
                    open.append(element)
                    break
                }
                guard index > before, let attribute = name() else {
                    problems.append("a bad attribute in <\(element)> at \(index)")
                    break
                }
                if !attributes.insert(attribute).inserted { problems.append("attribute \(attribute) twice in <\(element)>") }
                guard index < characters.count, characters[index] == "=" else {
                    problems.append("attribute \(attribute) of <\(element)> has no value")
                    break
                }
                index += 1
                guard index < characters.count, characters[index] == "\"" || characters[index] == "'" else {
                    problems.append("attribute \(attribute) of <\(element)> is not quoted")
                    break
                }
                let quote = characters[index]
                index += 1
                while index < characters.count, characters[index] != quote {
                    let value = characters[index]
                    if value == "<" || !allowed(value) {
                        problems.append("attribute \(attribute) of <\(element)> holds a '<' or a bad character")
                    }
                    if value == "&" {
                        index += 1
                        if !reference() { problems.append("a bad reference in attribute \(attribute) of <\(element)>") }
                        continue
                    }
                    index += 1
                }
                index += 1
            }
        }
        if problems.isEmpty, !open.isEmpty { problems.append("unclosed elements: \(open)") }
        if problems.isEmpty, roots != 1 { problems.append("\(roots) root elements") }
        return problems
    }
}
