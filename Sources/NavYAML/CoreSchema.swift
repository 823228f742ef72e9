import NavJSON

/// What a scalar means under YAML 1.2's core schema (YAML 1.2.2, §10.3.2), the schema JSON
/// documents already agree with: `null`, `~` and nothing are null; `true`/`false` (three
/// spellings each) are booleans; `[-+]?[0-9]+`, `0o…` and `0x…` are integers; decimal and
/// exponent forms are floats; everything else is text. YAML 1.1's `yes`/`no`/`on`/`off`,
/// base-60 `1:30` and `1_000` are text here, as in every YAML 1.2 reader.
enum CoreSchema {
    /// A scalar's value, or why JSON cannot hold it.
    enum Resolution: Equatable {
        case value(JSONValue)
        /// A number JSON has no way to write (`.inf`, `.nan`, `1e400`, `0x` with 20 digits).
        case unrepresentable(String)
    }

    /// The core tags, as libyaml expands `!!str` and the rest.
    static let tagPrefix = "tag:yaml.org,2002:"

    /// A tag as it is written: `!!int` for the core schema's, the others as they are.
    static func written(_ tag: String) -> String {
        tag.hasPrefix(tagPrefix) ? "!!" + tag.dropFirst(tagPrefix.count) : tag
    }

    /// The tags a scalar may carry: the core ones and `!` (the non-specific tag, which makes text).
    static let scalarTags = Set(["!"] + ["str", "null", "bool", "int", "float"].map { tagPrefix + $0 })

    /// A plain (unquoted, untagged) scalar: the first of null, bool, int and float it spells, or text.
    static func plain(_ text: String) -> Resolution {
        if isNull(text) { return .value(.null) }
        if let flag = bool(text) { return .value(.bool(flag)) }
        if let number = integer(text) ?? float(text) { return number }
        return .value(.string(text))
    }

    /// A scalar with an explicit tag: `!!str` and `!` make text of anything; `!!null`, `!!bool`,
    /// `!!int` and `!!float` must spell what they name.
    ///
    /// - Returns: `nil` when the text is not what the tag says, or the tag is not a core one.
    static func tagged(_ text: String, tag: String) -> Resolution? {
        switch tag {
        case "!", tagPrefix + "str": return .value(.string(text))
        case tagPrefix + "null": return isNull(text) ? .value(.null) : nil
        case tagPrefix + "bool": return bool(text).map { .value(.bool($0)) }
        case tagPrefix + "int": return integer(text)
        // `!!float 1` is the float 1.0 (the core schema's float pattern takes plain digits).
        case tagPrefix + "float": return float(text)
        default: return nil
        }
    }

    static func isNull(_ text: String) -> Bool {
        switch text {
        case "", "~", "null", "Null", "NULL": true
        default: false
        }
    }

    static func bool(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE": true
        case "false", "False", "FALSE": false
        default: nil
        }
    }

    /// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`; `nil` for anything else.
    ///
    /// A decimal integer beyond `Int` is a double, as the JSON parser reads one; an octal or
    /// hexadecimal one beyond it cannot be written as JSON.
    static func integer(_ text: String) -> Resolution? {
        let bytes = Array(text.utf8)
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "o") || bytes[1] == UInt8(ascii: "x") {
            let hexadecimal = bytes[1] == UInt8(ascii: "x")
            let digits = bytes[2...]
            guard digits.allSatisfy({ hexadecimal ? Hex.value($0) != nil : ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "7")) }) else {
                return nil
            }
            guard let value = Int(String(decoding: digits, as: UTF8.self), radix: hexadecimal ? 16 : 8) else {
                return .unrepresentable("'\(text)' is an integer too large for JSON")
            }
            return .value(.int(value))
        }
        var digits = bytes[...]
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return nil }
        if let value = Int(text) { return .value(.int(value)) }
        return finite(text)
    }

    /// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, and the infinities and NaN
    /// (`.inf`, `-.Inf`, `.NAN`…), which JSON cannot hold; `nil` for anything else.
    static func float(_ text: String) -> Resolution? {
        let bytes = Array(text.utf8)
        var index = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        let unsigned = String(decoding: bytes[index...], as: UTF8.self)
        if [".inf", ".Inf", ".INF"].contains(unsigned) {
            return .unrepresentable("'\(text)' is infinite, which JSON cannot hold")
        }
        // NaN takes no sign: `-.nan` is text.
        if index == 0, [".nan", ".NaN", ".NAN"].contains(unsigned) {
            return .unrepresentable("'\(text)' is not a number, which JSON cannot hold")
        }
        func digits() -> Int {
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            return index - start
        }
        var mantissa = digits()
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            mantissa += digits()
        }
        guard mantissa > 0 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            guard digits() > 0 else { return nil }
        }
        guard index == bytes.count else { return nil }
        return finite(text)
    }

    /// A number spelt in decimal, as a double; one beyond `Double`'s range cannot be written as JSON.
    private static func finite(_ text: String) -> Resolution {
        guard let value = Double(text), value.isFinite else {
            return .unrepresentable("'\(text)' is a number out of range")
        }
        return .value(.double(value))
    }
}
