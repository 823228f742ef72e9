import Foundation
import NavJSON
import NavYAML

/// A JSON value for the tests, read by the strict RFC 8259 parser below (or from YAML with
/// navd's YAML reader), independent of NavCore's own codec, so the daemon's output is checked by a
/// parser it does not share. (Foundation's `JSONDecoder` on Linux accepts `[1,]`.)
///
/// Integers and doubles stay apart (`1` is `.int`, `1.5` is `.double`) and `true` is
/// never a number, which is what schema `type` checks need.
indirect enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses JSON text strictly (no JSON5, no trailing commas, no NaN).
    init(parsing bytes: [UInt8]) throws {
        do {
            var parser = StrictJSONParser(bytes: bytes)
            self = try parser.document()
        } catch {
            throw ParseError(description: "not JSON: \(error); body: \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
    }

    init(parsing text: String) throws {
        try self.init(parsing: Array(text.utf8))
    }

    /// Converts a YAML document (as OpenAPI files are written) with the YAML 1.2 core schema,
    /// read by navd's YAML reader (the JSON parser below stays independent of navd's).
    init(yaml text: String) throws {
        self.init(try YAMLReader.read(text))
    }

    private init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .int(number)
        case .double(let number): self = .double(number)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(JSON.init))
        case .object(let members): self = .object(members.mapValues(JSON.init))
        }
    }

    // MARK: Access

    subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    subscript(index: Int) -> JSON? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var int: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    var array: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    var object: [String: JSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    var isNull: Bool { self == .null }

    /// The JSON Schema type name of this value.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Resolves an RFC 6901 pointer (`/components/schemas/Problem`).
    func resolve(pointer: String) -> JSON? {
        guard !pointer.isEmpty else { return self }
        guard pointer.hasPrefix("/") else { return nil }
        var current = self
        for token in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[key] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(key), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    // MARK: Writing

    /// Compact JSON text with sorted keys.
    var text: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .double(let value): return "\(value)"
        case .string(let value): return Self.quoted(value)
        case .array(let elements): return "[" + elements.map(\.text).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { Self.quoted($0) + ":" + (members[$0] ?? .null).text }.joined(separator: ",") + "}"
        }
    }

    var bytes: [UInt8] { Array(text.utf8) }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Equality as JSON Schema sees it: `1` equals `1.0`.
    func schemaEquals(_ other: JSON) -> Bool {
        switch (self, other) {
        case (.int(let left), .double(let right)), (.double(let right), .int(let left)): return Double(left) == right
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { $0.schemaEquals($1) }
        case (.object(let left), .object(let right)):
            return left.count == right.count && left.allSatisfy { key, value in right[key].map(value.schemaEquals) ?? false }
        default: return self == other
        }
    }
}

extension JSON: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    typealias Key = String
    typealias Value = JSON

    init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    init(arrayLiteral elements: JSON...) { self = .array(elements) }
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(floatLiteral value: Double) { self = .double(value) }
    init(nilLiteral: ()) { self = .null }
}

extension JSON: CustomStringConvertible {
    var description: String { text }
}

/// RFC 8259, strictly: one value, no trailing commas, no leading zeros, no NaN, valid UTF-8,
/// escapes checked (a lone surrogate is an error), nesting at most 512.
private struct StrictJSONParser {
    struct Failure: Error, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws -> JSON {
        let value = try parseValue(depth: 0)
        skipSpace()
        guard index == bytes.count else { throw fail("text after the value") }
        return value
    }

    private func fail(_ reason: String) -> Failure {
        Failure(offset: index, reason: reason)
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    /// Reads past `byte` if it is next.
    private mutating func skip(_ byte: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else { return false }
        index += 1
        return true
    }

    /// After a member or an element: reads past the `,` before another (false) or the bracket
    /// `closing` that ends `container` (true).
    private mutating func closes(_ closing: Unicode.Scalar, in container: String) throws -> Bool {
        skipSpace()
        guard index < bytes.count else { throw fail("unexpected end in \(container)") }
        if skip(",") { return false }
        if skip(closing) { return true }
        throw fail("expected , or \(closing)")
    }

    private mutating func expect(_ literal: String) throws {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw fail("expected \(literal)") }
            index += 1
        }
    }

    private mutating func parseValue(depth: Int) throws -> JSON {
        guard depth < 512 else { throw fail("nested too deeply") }
        skipSpace()
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: JSON] = [:]
            skipSpace()
            if skip("}") { return .object(members) }
            repeat {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = try parseString()
                skipSpace()
                try expect(":")
                guard members[key] == nil else { throw fail("duplicate member '\(key)'") }
                members[key] = try parseValue(depth: depth + 1)
            } while try !closes("}", in: "an object")
            return .object(members)
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSON] = []
            skipSpace()
            if skip("]") { return .array(elements) }
            repeat {
                elements.append(try parseValue(depth: depth + 1))
            } while try !closes("]", in: "an array")
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        default:
            return try parseNumber()
        }
    }

    private mutating func parseNumber() throws -> JSON {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { throw fail("expected a value") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (0x30...0x39).contains(bytes[index]) { throw fail("leading zero") }
        } else {
            _ = digits()
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            integral = false
            guard digits() > 0 else { throw fail("expected digits after .") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            integral = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw fail("expected exponent digits") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let whole = Int(text) { return .int(whole) }
        guard let real = Double(text), real.isFinite else { throw fail("number out of range") }
        return .double(real)
    }

    private mutating func parseString() throws -> String {
        index += 1  // the opening quote
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() throws {
            guard !run.isEmpty else { return }
            guard let text = String(validating: run, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
            scalars.append(contentsOf: text.unicodeScalars)
            run = []
        }
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                try flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush()
                guard index < bytes.count else { throw fail("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    let unit = try hex4()
                    if (0xD800..<0xDC00).contains(unit) {
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low),
                            let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                        else {
                            throw fail("unpaired surrogate")
                        }
                        scalars.append(scalar)
                    } else {
                        guard let scalar = Unicode.Scalar(unit) else { throw fail("unpaired surrogate") }
                        scalars.append(scalar)
                    }
                default:
                    throw fail("invalid escape")
                }
            case 0..<0x20:
                throw fail("control character in a string")
            default:
                run.append(byte)
            }
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16) else {
            throw fail("expected 4 hex digits")
        }
        index += 4
        return value
    }
}
