/// Durations as people type them: `500ms`, `90s`, `30m`, `24h`, `7d`, or plain seconds. What
/// `navd serve`'s duration options and the API's duration parameters (a funnel's `within`) read.
public enum DurationText {
    /// The duration `text` spells, in milliseconds; nil for anything else, a negative amount, or
    /// one that overflows.
    public static func milliseconds(_ text: some StringProtocol) -> Int64? {
        let utf8 = Substring(text).utf8
        if utf8.count > 2, utf8.suffix(2).elementsEqual("ms".utf8) {
            return whole(utf8.dropLast(2)).flatMap { $0 >= 0 ? $0 : nil }
        }
        let units: [UInt8: Int64] = [
            UInt8(ascii: "s"): 1000, UInt8(ascii: "m"): 60_000, UInt8(ascii: "h"): 3_600_000, UInt8(ascii: "d"): 86_400_000
        ]
        if let last = utf8.last, let unit = units[last], let amount = whole(utf8.dropLast()), amount >= 0 {
            return amount.multipliedReportingOverflow(by: unit).overflow ? nil : amount * unit
        }
        return whole(utf8).flatMap { $0.multipliedReportingOverflow(by: 1000).overflow ? nil : $0 * 1000 }
    }

    /// Decimal digits, a `+` or `-` allowed first (the syntax of Swift's `Int(_:)`), nothing else.
    private static func whole(_ utf8: Substring.UTF8View.SubSequence) -> Int64? {
        DecimalDigits.parse(utf8, sign: .plusOrMinus).map(Int64.init)
    }
}
