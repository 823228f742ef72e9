/// Serialises JSON into a byte buffer: compact, object keys sorted, so equal values give equal bytes.
///
/// The buffer is grown ahead of each write and written through a pointer: the hot writes
/// (literal fragments, strings without escapes, integers) are a bounds check and a copy,
/// not a sequence of `Array.append` calls.
public struct JSONWriter {
    /// `storage[..<count]` is written; the rest is room for the next writes (zeroes, or bytes of a
    /// direct write that did not fit, see ``writeDirect(estimate:_:)``).
    @usableFromInline var storage: [UInt8]
    @usableFromInline var count = 0

    public init(reservingCapacity capacity: Int = 256) {
        // Not zeroed: no byte past `count` is ever read (``finish()`` and ``bytes`` cut there), and
        // zeroing cost a `memset` of the whole buffer for every answer (about 850 instructions
        // for a session view and its change's messages, measured with callgrind).
        let capacity = max(capacity, 16)
        storage = [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
    }

    /// How many bytes are written so far.
    package var writtenCount: Int { count }

    /// The JSON written so far.
    public var bytes: [UInt8] {
        Array(storage[..<count])
    }

    /// The JSON written, ending the writer: its buffer cut to the written bytes in place, with
    /// no copy (the buffer keeps its capacity: for answers that do not live long; what is kept
    /// takes ``finishFitted()``).
    public consuming func finish() -> [UInt8] {
        var result = storage
        storage = []
        result.removeSubrange(count...)
        return result
    }

    /// The JSON written, ending the writer, in a buffer of about its size (``Swift/Array/fitted()``):
    /// for bytes that are kept, whose budgets count their bytes.
    package consuming func finishFitted() -> [UInt8] {
        finish().fitted()
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeLiteral("null")
        case .bool(let flag): if flag { writeLiteral("true") } else { writeLiteral("false") }
        case .int(let number): writeInt(number)
        case .double(let number): writeDouble(number)
        case .string(let text): writeString(text)
        case .array(let elements):
            writeByte(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { writeByte(UInt8(ascii: ",")) }
                write(element)
            }
            writeByte(UInt8(ascii: "]"))
        case .object(let members):
            writeByte(UInt8(ascii: "{"))
            // No sorting (an array of keys made) for the objects a session mostly holds: none or one member.
            if members.count <= 1 {
                if let (key, member) = members.first {
                    writeString(key)
                    writeByte(UInt8(ascii: ":"))
                    write(member)
                }
                writeByte(UInt8(ascii: "}"))
                return
            }
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { writeByte(UInt8(ascii: ",")) }
                writeString(key)
                writeByte(UInt8(ascii: ":"))
                if let member = members[key] { write(member) }
            }
            writeByte(UInt8(ascii: "}"))
        }
    }

    /// Appends text that is already valid JSON (a literal, punctuation, a pre-encoded fragment).
    package mutating func writeRaw(_ text: String) {
        var text = text
        text.withUTF8 { writeBytes($0) }
    }

    /// Appends bytes that are already valid JSON (a fragment written by another writer).
    package mutating func writeRaw(bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { writeBytes($0) }
    }

    /// Appends bytes that are already valid JSON, read in place.
    package mutating func writeRaw(bytes: UnsafeBufferPointer<UInt8>) {
        writeBytes(bytes)
    }

    /// Appends a literal fragment of JSON (`{"id":`): a plain copy of its bytes.
    @inlinable @inline(__always)
    package mutating func writeLiteral(_ text: StaticString) {
        writeBytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends one byte of punctuation.
    @inlinable
    package mutating func writeByte(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    /// Appends the decimal digits of `number` without going through a `String`.
    public mutating func writeInt(_ number: Int) {
        reserve(21)  // a sign and up to 20 digits
        storage.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            count = Self.digits(number, at: base + count) - base
        }
    }

    public mutating func writeDouble(_ number: Double) {
        guard number.isFinite else {
            writeLiteral("null")
            return
        }
        if number.rounded() == number, abs(number) < 1e15 {
            writeInt(Int(number))
        } else {
            writeRaw("\(number)")
        }
    }

    /// An RFC 3339 time in UTC with milliseconds (``Timestamp``), quoted: written in place.
    package mutating func writeTimestamp(milliseconds: Int64) {
        reserve(26)
        storage.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            base[count] = UInt8(ascii: "\"")
            Timestamp.write(milliseconds: milliseconds, at: base + count + 1)
            base[count + 25] = UInt8(ascii: "\"")
        }
        count += 26
    }

    /// A JSON string: quotes, and the escapes RFC 8259 requires (`"`, `\\`, control characters).
    public mutating func writeString(_ text: String) {
        text.withUTF8Bytes { writeEscaped($0) }
    }

    /// Makes room for `extra` more bytes.
    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > storage.count { grow(extra) }
    }

    @usableFromInline
    mutating func grow(_ extra: Int) {
        storage.append(contentsOf: repeatElement(0, count: max(extra, storage.count)))
    }

    @inlinable @inline(__always)
    mutating func writeBytes(_ source: UnsafeBufferPointer<UInt8>) {
        guard let from = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count)
        let start = count
        storage.withUnsafeMutableBufferPointer { out in
            out.baseAddress.map { ($0 + start).update(from: from, count: source.count) }
        }
        count += source.count
    }

    /// Quotes and escapes `utf8`. Measured first when the room left is less than its worst case
    /// (six bytes a byte), so the buffer grows by what the text needs: a 60 KB state value does
    /// not leave a buffer of 360 KB behind it.
    mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        let worst = utf8.count * 6 + 2
        reserve(storage.count - count >= worst ? worst : Self.quotedCount(utf8))
        storage.withUnsafeMutableBufferPointer { out in
            guard let output = out.baseAddress else { return }
            count = Self.quote(utf8, at: output + count) - output
        }
    }

    /// Writes `utf8` quoted and escaped at `output`, which has room for ``quotedCount(_:)`` bytes
    /// (`utf8.count * 6 + 2` at the most).
    /// Eight bytes at a time while none of them needs an escape. - Returns: the end of the writing.
    @usableFromInline
    static func quote(_ utf8: UnsafeBufferPointer<UInt8>, at output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var at = 0
        output[at] = UInt8(ascii: "\"")
        at += 1
        var index = 0
        if let input = utf8.baseAddress {
            let raw = UnsafeRawPointer(input)
            while index + 8 <= utf8.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                guard !needsEscape(word) else { break }
                UnsafeMutableRawPointer(output + at).storeBytes(of: word, as: UInt64.self)
                index += 8
                at += 8
            }
        }
        while index < utf8.count {
            let byte = utf8[index]
            index += 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                output[at] = byte
                at += 1
                continue
            }
            output[at] = 0x5C
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                output[at + 1] = byte
                at += 2
            case 0x0A:
                output[at + 1] = UInt8(ascii: "n")
                at += 2
            case 0x0D:
                output[at + 1] = UInt8(ascii: "r")
                at += 2
            case 0x09:
                output[at + 1] = UInt8(ascii: "t")
                at += 2
            default:
                output[at + 1] = UInt8(ascii: "u")
                output[at + 2] = UInt8(ascii: "0")
                output[at + 3] = UInt8(ascii: "0")
                output[at + 4] = Hex.upperDigit(byte >> 4)
                output[at + 5] = Hex.upperDigit(byte & 0xF)
                at += 6
            }
        }
        output[at] = UInt8(ascii: "\"")
        return output + at + 1
    }

    /// How many bytes `quote(_:at:)` writes for `utf8`.
    @usableFromInline
    static func quotedCount(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var total = utf8.count + 2
        var index = 0
        if let input = utf8.baseAddress {
            let raw = UnsafeRawPointer(input)
            while index + 8 <= utf8.count, !needsEscape(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
            }
        }
        while index < utf8.count {
            let byte = utf8[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: total += 1
            case ..<0x20: total += 5
            default: break
            }
        }
        return total
    }

    /// Whether any of the eight bytes is below 0x20, a `"` or a `\\` (exact, the usual
    /// "has a zero byte" bit trick applied three times).
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quotes = (quote &- ones) & ~quote & highs
        let backslashes = (backslash &- ones) & ~backslash & highs
        return (below | quotes | backslashes) != 0
    }
}

extension JSONWriter {
    /// A write position in the writer's buffer, for ``JSONWriter/writeDirect(estimate:_:)``.
    ///
    /// Each write checks that it fits before the buffer's end and is then a plain copy; one that
    /// does not fit is dropped and sets `overflowed` (the writer then keeps nothing of the run).
    /// A cursor points into the writer's buffer: it is valid only inside the body it is handed to.
    @usableFromInline package struct Cursor {
        @usableFromInline var position: UnsafeMutablePointer<UInt8>
        @usableFromInline let end: UnsafeMutablePointer<UInt8>
        /// Whether a write did not fit.
        @usableFromInline var overflowed = false

        @usableFromInline
        init(position: UnsafeMutablePointer<UInt8>, end: UnsafeMutablePointer<UInt8>) {
            self.position = position
            self.end = end
        }

        /// Where the next byte goes, for measuring what was written between two points.
        package var address: UnsafeMutablePointer<UInt8> { position }

        /// Marks the run as not written, so that the caller writes it through the plain writes.
        package mutating func decline() {
            overflowed = true
        }

        /// A literal fragment of JSON, as ``JSONWriter/writeLiteral(_:)``.
        @inlinable @inline(__always)
        package mutating func literal(_ text: StaticString) {
            let length = text.utf8CodeUnitCount
            guard end - position >= length else {
                overflowed = true
                return
            }
            position.update(from: text.utf8Start, count: length)
            position += length
        }

        /// An integer, as ``JSONWriter/writeInt(_:)``.
        @inlinable @inline(__always)
        package mutating func int(_ number: Int) {
            guard end - position >= 21 else {
                overflowed = true
                return
            }
            position = JSONWriter.digits(number, at: position)
        }

        /// A string, as ``JSONWriter/writeString(_:)``.
        @inlinable @inline(__always)
        package mutating func string(_ text: String) {
            text.withUTF8Bytes { string(utf8: $0) }
        }

        @inlinable @inline(__always)
        mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
            let room = end - position
            // Measured only when the room might be too small for the worst case, six bytes a byte.
            guard room >= utf8.count * 6 + 2 || room >= JSONWriter.quotedCount(utf8) else {
                overflowed = true
                return
            }
            position = JSONWriter.quote(utf8, at: position)
        }
    }

    /// Writes through a ``Cursor`` straight into the buffer, after making room for `estimate` more
    /// bytes: for a run of many small writes (each then a bounds check and a copy, no `Array`
    /// access or growth check). The cursor may use any room the buffer has beyond `estimate`.
    /// - Returns: whether every write fit. If one did not, nothing of the run is kept and the
    ///   caller writes the same through the plain writes (which grow the buffer as needed).
    @inlinable
    package mutating func writeDirect(estimate: Int, _ body: (inout Cursor) -> Void) -> Bool {
        reserve(estimate)
        let start = count
        let end: Int? = storage.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return nil }
            var cursor = Cursor(position: base + start, end: base + out.count)
            body(&cursor)
            return cursor.overflowed ? nil : cursor.position - base
        }
        guard let end else { return false }
        count = end
        return true
    }

    /// Writes the decimal digits of `number` at `output`, which has room for 21 bytes.
    /// - Returns: the end of the writing.
    @usableFromInline
    static func digits(_ number: Int, at output: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var output = output
        if number < 0 {
            output.pointee = UInt8(ascii: "-")
            output += 1
        }
        let digits = DecimalDigits.count(number.magnitude)
        DecimalDigits.write(number.magnitude, digits: digits, into: UnsafeMutableBufferPointer(start: output, count: digits), at: 0)
        return output + digits
    }
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
