/// Serialises JSON into a byte buffer: compact, object keys sorted, so equal values give equal bytes.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeRaw("null")
        case .bool(let flag): writeRaw(flag ? "true" : "false")
        case .int(let number): writeInt(number)
        case .double(let number): writeDouble(number)
        case .string(let text): writeString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if let member = members[key] { write(member) }
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends text that is already valid JSON (a literal, punctuation, a pre-encoded fragment).
    public mutating func writeRaw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func writeInt(_ number: Int) {
        bytes.append(contentsOf: String(number).utf8)
    }

    public mutating func writeDouble(_ number: Double) {
        guard number.isFinite else {
            writeRaw("null")
            return
        }
        if number.rounded() == number, abs(number) < 1e15 {
            writeInt(Int(number))
        } else {
            bytes.append(contentsOf: "\(number)".utf8)
        }
    }

    public mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(0x5C); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(0x5C); bytes.append(byte)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                writeRaw("\\u00")
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0xF))
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

@inline(__always) func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
}

extension JSONValue {
    /// The compact, key-sorted JSON text of this value.
    public var jsonBytes: [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    public var jsonString: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }
}
