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
