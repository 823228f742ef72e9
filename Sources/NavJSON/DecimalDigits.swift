/// An integer's decimal digits written straight into a byte buffer, as `String(number)` spells
/// them: shared by ``JSONWriter``, the path text writer and the daemon's byte and string writers.
package enum DecimalDigits {
    /// How many digits `magnitude` has (1 for 0).
    @inlinable @inline(__always)
    package static func count(_ magnitude: UInt) -> Int {
        var digits = 1
        var bound: UInt = 10
        while digits < 20, magnitude >= bound {
            digits += 1
            bound = bound &* 10
        }
        return digits
    }

    /// Writes the `digits` digits of `magnitude` into `buffer[start..<start + digits]`, from
    /// the last one back (divisions by the constant 10 only).
    @inlinable @inline(__always)
    package static func write(_ magnitude: UInt, digits: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var magnitude = magnitude
        var position = start + digits
        repeat {
            position -= 1
            buffer[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }
}

extension DecimalDigits {
    /// Which sign may come before the digits ``parse(_:sign:leadingZeros:)`` reads.
    package enum Sign: Sendable {
        /// None: digits only.
        case none
        /// `-` only.
        case minus
        /// `+` or `-`, as Swift's `Int(_:)` reads them.
        case plusOrMinus
    }

    /// The integer `text` spells in decimal: a sign if `sign` allows one, then one or more ASCII
    /// digits (a `0` before another digit only with `leadingZeros`), and nothing else — no blank,
    /// no fraction, no exponent. The one decimal reader behind `If-Match` versions, query
    /// parameters and the daemon's settings, each with its own `sign` and `leadingZeros`.
    /// - Returns: the number, or nil for any other text and for a number outside `Int`.
    @inlinable
    package static func parse(_ text: some Collection<UInt8>, sign: Sign = .none, leadingZeros: Bool = true) -> Int? {
        var index = text.startIndex
        var negative = false
        if index != text.endIndex, sign != .none {
            if text[index] == UInt8(ascii: "-") {
                negative = true
                text.formIndex(after: &index)
            } else if sign == .plusOrMinus, text[index] == UInt8(ascii: "+") {
                text.formIndex(after: &index)
            }
        }
        guard index != text.endIndex else { return nil }
        if !leadingZeros, text[index] == UInt8(ascii: "0"), text.index(after: index) != text.endIndex { return nil }
        var number = 0
        while index != text.endIndex {
            let byte = text[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte &- UInt8(ascii: "0"))
            // Negative numbers are accumulated downwards, so `Int.min` reads too.
            let (tens, overflowTens) = number.multipliedReportingOverflow(by: 10)
            let (next, overflowNext) = negative ? tens.subtractingReportingOverflow(digit) : tens.addingReportingOverflow(digit)
            guard !overflowTens, !overflowNext else { return nil }
            number = next
            text.formIndex(after: &index)
        }
        return number
    }
}
