import NavJSON

/// A strict recursive-descent reader of the DeepTransition path grammar (docs/design.md, "Paths"), building
/// `Component`s: `PathComponent` for the public API, `TextComponent` for a navigation.
struct PathParser<Component: ParsedComponent> {
    /// The text's UTF-8, borrowed for the parse (see `with(_:_:)`).
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Runs `parse` on a parser over `text`'s UTF-8 in place.
    static func with<Result>(
        _ text: String, _ parse: (inout PathParser) throws(PathError) -> Result
    ) throws(PathError) -> Result {
        var text = text
        let result: Swift.Result<Result, PathError> = text.withUTF8 { bytes in
            var parser = PathParser(bytes)
            do throws(PathError) {
                return .success(try parse(&parser))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Entry points

    mutating func parsePathOnly() throws(PathError) -> [Component] {
        if peek(UInt8(ascii: "^")) { throw error("'^' is only allowed at the start of a path a client sends") }
        if startsWithDots() { throw error("'..' is only allowed at the start of a relative path") }
        var components: [Component] = []
        try parseComponents(first: true, into: &components)
        return components
    }

    mutating func parseExpression() throws(PathError) -> ParsedExpression<Component> {
        var components: [Component] = []
        components.reserveCapacity(4)
        if peek(UInt8(ascii: "^")) {
            index += 1
            try parseComponents(first: true, into: &components)
            return .absolute(components)
        }
        if startsWithDots() {
            var ups = 1
            index += 2
            while index < bytes.count {
                let segueStart = index
                let (segue, container) = try parseSegue(isFirst: false)
                if startsWithDots() {
                    guard container == .none || segue == .push else {
                        throw PathError(offset: scalarOffset(segueStart), reason: "a container mark cannot precede '..'")
                    }
                    ups += 1
                    index += 2
                    continue
                }
                components.append(try parseComponent(segue: segue, container: container))
                try parseComponents(first: false, into: &components)
                break
            }
            return .relative(ups: ups, components: components)
        }
        try parseComponents(first: true, into: &components)
        if let up = try upCount(components) { return .up(up) }
        return .relative(ups: 0, components: components)
    }

    // MARK: Grammar

    /// `component*`: the first may omit its segue (a bare name is a push).
    private mutating func parseComponents(first: Bool, into components: inout [Component]) throws(PathError) {
        if first, index < bytes.count {
            if isNameByte(bytes[index]) {
                components.append(try parseComponent(segue: .push, container: .none))
            } else {
                let (segue, container) = try parseSegue(isFirst: true)
                components.append(try parseComponent(segue: segue, container: container))
            }
        }
        while index < bytes.count {
            let (segue, container) = try parseSegue(isFirst: false)
            components.append(try parseComponent(segue: segue, container: container))
        }
    }

    /// `/`, `!`, `!/`, `#` or `#/`. A leading `/` puts the root in a navigation container.
    private mutating func parseSegue(isFirst: Bool) throws(PathError) -> (Segue, Container) {
        guard index < bytes.count else { throw error("expected '/', '!' or '#'") }
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "/"):
            index += 1
            return (.push, isFirst ? .navigation : .none)
        case UInt8(ascii: "!"), UInt8(ascii: "#"):
            index += 1
            let segue: Segue = byte == UInt8(ascii: "!") ? .modal : .tab
            if peek(UInt8(ascii: "/")) {
                index += 1
                return (segue, .navigation)
            }
            return (segue, .none)
        case UInt8(ascii: ")"):
            throw error("text after ')'")
        default:
            if isNameByte(byte), index > 0, bytes[index - 1] == UInt8(ascii: ")") {
                throw error("text after ')'")
            }
            // Right after a name (`/list news`): the name is what the character breaks.
            if index > 0, isNameByte(bytes[index - 1]), !isBoundary(byte) {
                throw error("character not allowed in a name (a value in parentheses may hold it, percent-encoded)")
            }
            throw error("expected '/', '!' or '#'")
        }
    }

    /// `name` or `name(key=value,…)`.
    private mutating func parseComponent(segue: Segue, container: Container) throws(PathError) -> Component {
        if startsWithDots() { throw error("'..' is only allowed at the start of a relative path") }
        let name = try parseName(what: "name")
        if name == "." { throw PathError(offset: scalarOffset(index - 1), reason: "'.' is not a name") }
        // Made once: empty when there is no `(`, else sized for the parameters written.
        var params: Component.Params
        if peek(UInt8(ascii: "(")) {
            let open = index
            index += 1
            params = Component.Params(capacity: parameterCountEstimate())
            while true {
                // `/top(` and `/top(a=1,` end where a key should be: the '(' is what is unclosed.
                guard index < bytes.count else { throw PathError(offset: scalarOffset(open), reason: "unclosed '('") }
                let keyStart = index
                let key = try parseName(what: "key")
                guard peek(UInt8(ascii: "=")) else {
                    if index >= bytes.count { throw PathError(offset: scalarOffset(open), reason: "unclosed '('") }
                    throw error("expected '=' after key")
                }
                index += 1
                let value = try parseValue(open: open)
                guard params.add(key: key, value: value) else {
                    throw PathError(offset: scalarOffset(keyStart), reason: "duplicate key '\(key)'")
                }
                guard index < bytes.count else { throw PathError(offset: scalarOffset(open), reason: "unclosed '('") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                index += 1  // ')'
                break
            }
            if index < bytes.count, isNameByte(bytes[index]) || bytes[index] == UInt8(ascii: "(") {
                throw error("text after ')'")
            }
        } else {
            params = Component.Params(capacity: 0)
        }
        return Component(name: name, segue: segue, container: container, params: params)
    }

    private mutating func parseName(what: String) throws(PathError) -> String {
        let start = index
        var end = index
        while end < bytes.count, isNameByte(bytes[end]) { end += 1 }
        index = end
        guard index > start else {
            if index >= bytes.count || isBoundary(bytes[index]) { throw error("empty \(what)") }
            throw error("character not allowed in a \(what)")
        }
        return utf8String(UnsafeBufferPointer(rebasing: bytes[start..<index]))
    }

    private func isBoundary(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: ","), UInt8(ascii: "="):
            true
        default: false
        }
    }

    /// A value runs to the next unescaped `,` or `)`; `%XX` decodes to a byte.
    private mutating func parseValue(open: Int) throws(PathError) -> String {
        let start = index
        var escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ",") || byte == UInt8(ascii: ")") { break }
            if byte == UInt8(ascii: "(") { throw error("'(' inside a value must be written %28") }
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, Hex.value(bytes[index + 1]) != nil,
                    Hex.value(bytes[index + 2]) != nil
                else { throw error("'%' must be followed by two hex digits") }
                escaped = true
                index += 3
                continue
            }
            if byte < 0x20 || byte == 0x7F { throw error("control character in a value") }
            index += 1
        }
        guard index < bytes.count else { throw PathError(offset: scalarOffset(open), reason: "unclosed '('") }
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
        guard escaped else { return utf8String(raw) }
        guard let value = PercentDecoding.decode(raw, strict: true) else {
            throw PathError(offset: scalarOffset(start), reason: "percent-encoded value is not UTF-8")
        }
        return value
    }

    /// `up`, `up(n=K)` as a whole path.
    private func upCount(_ components: [Component]) throws(PathError) -> Int? {
        guard components.count == 1, let only = components.first, only.name == "up",
            only.segue == .push, only.container == .none
        else { return nil }
        if only.params.count == 0 { return 1 }
        guard only.params.count == 1, let text = only.params.text(of: "n") else {
            throw PathError(offset: 3, reason: "up takes one parameter, n")
        }
        guard let count = Int(text), count >= 1, String(count) == text else {
            throw PathError(offset: 5, reason: "n must be a whole number of at least 1")
        }
        return count
    }

    // MARK: Helpers

    /// The number of parameters from here to the next `)`, so their dictionary is allocated once.
    private func parameterCountEstimate() -> Int {
        var count = 1
        var position = index
        while position < bytes.count, bytes[position] != UInt8(ascii: ")") {
            if bytes[position] == UInt8(ascii: ",") { count += 1 }
            position += 1
        }
        return count
    }

    private func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    private func startsWithDots() -> Bool {
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "."), bytes[index + 1] == UInt8(ascii: ".") else {
            return false
        }
        return index + 2 == bytes.count || !isNameByte(bytes[index + 2])
    }

    private func error(_ reason: String) -> PathError {
        PathError(offset: scalarOffset(index), reason: reason)
    }

    /// Converts a byte offset to an offset in Unicode scalars, which clients can index by.
    private func scalarOffset(_ byteOffset: Int) -> Int {
        let clamped = min(max(0, byteOffset), bytes.count)
        return String(decoding: bytes[0..<clamped], as: UTF8.self).unicodeScalars.count
    }
}
