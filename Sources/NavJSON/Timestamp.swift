/// Times as RFC 3339 text in UTC, `2026-11-27T16:00:00.123Z`, from and to milliseconds since the
/// Unix epoch: the time of a feed record, the `since` of a query, a log line's `ts`.
///
/// Pure arithmetic on the proleptic Gregorian calendar (days from civil dates and back, as
/// Howard Hinnant's `days_from_civil`), so no C library and no locale is involved.
public enum Timestamp {
    /// `2026-11-27T16:00:00.123Z`; `withMilliseconds: false` stops after the seconds, without `Z`.
    public static func text(milliseconds: Int64, withMilliseconds: Bool = true) -> String {
        String(decoding: bytes(milliseconds: milliseconds, withMilliseconds: withMilliseconds), as: UTF8.self)
    }

    /// ``text(milliseconds:withMilliseconds:)`` as UTF-8 bytes.
    public static func bytes(milliseconds: Int64, withMilliseconds: Bool = true) -> [UInt8] {
        let count = withMilliseconds ? 24 : 19
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress.map { write(milliseconds: milliseconds, withMilliseconds: withMilliseconds, at: $0) }
            initialized = count
        }
    }

    /// Writes ``text(milliseconds:withMilliseconds:)``'s bytes at `output`, which has room for
    /// 24 (19 without milliseconds): in place, as every feed record and log line has one.
    package static func write(milliseconds: Int64, withMilliseconds: Bool = true, at output: UnsafeMutablePointer<UInt8>) {
        let (seconds, millisecond) = milliseconds.floorDivided(by: 1000)
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let (year, month, day) = civil(fromDays: days)
        func digits(_ value: Int64, _ width: Int, at offset: Int) {
            var rest = max(0, value)
            for position in stride(from: offset + width - 1, through: offset, by: -1) {
                output[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        digits(year, 4, at: 0)
        output[4] = UInt8(ascii: "-")
        digits(month, 2, at: 5)
        output[7] = UInt8(ascii: "-")
        digits(day, 2, at: 8)
        output[10] = UInt8(ascii: "T")
        digits(secondOfDay / 3600, 2, at: 11)
        output[13] = UInt8(ascii: ":")
        digits(secondOfDay / 60 % 60, 2, at: 14)
        output[16] = UInt8(ascii: ":")
        digits(secondOfDay % 60, 2, at: 17)
        if withMilliseconds {
            output[19] = UInt8(ascii: ".")
            digits(millisecond, 3, at: 20)
            output[23] = UInt8(ascii: "Z")
        }
    }

    /// Milliseconds since the epoch of an RFC 3339 date-time: `2026-11-27T16:00:00Z`, with an
    /// optional fraction (digits past the millisecond are dropped) and `Z` or an offset `±hh:mm`;
    /// `t` and `z` as RFC 3339 allows. `nil` for anything else, or a date that does not exist.
    public static func milliseconds(parsing text: some StringProtocol) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 64 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == UInt8(ascii: "-"), let month = number(5, 2), bytes[7] == UInt8(ascii: "-"),
            let day = number(8, 2), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
            let hour = number(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = number(14, 2), bytes[16] == UInt8(ascii: ":"),
            let second = number(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60, second < 61 else {
            return nil
        }
        var index = 19
        var millisecond: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if digits < 3 { millisecond = millisecond * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millisecond *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, let hours = number(index + 1, 2), bytes[index + 3] == UInt8(ascii: ":"),
                let minutes = number(index + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offsetSeconds = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = self.days(fromYear: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetSeconds
        return seconds * 1000 + millisecond
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a civil date.
    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day since 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Quotient and remainder rounded towards minus infinity, so times before 1970 split right.
    fileprivate func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = self / divisor
        let remainder = self % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
