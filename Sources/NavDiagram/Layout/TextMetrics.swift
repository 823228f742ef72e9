/// Text widths in a monospace font, where the width is a count of columns: the SVG sets
/// `font-family: monospace`, whose advance is about 0.6 em (7.8 px at 13 px), so a box made
/// to fit the estimate fits the text.
enum TextMetrics {
    /// The advance of one column, as a fraction of the font size.
    static let advance = 0.6

    /// The width of `text` at `fontSize` pixels.
    static func width(_ text: String, fontSize: Double) -> Double {
        Double(columns(text)) * advance * fontSize
    }

    /// Columns `text` takes: one per character, two for East Asian wide and full-width ones.
    static func columns(_ text: String) -> Int {
        var count = 0
        for scalar in text.unicodeScalars {
            count += isWide(scalar.value) ? 2 : 1
        }
        return count
    }

    /// `text` cut to at most `limit` columns, ending in `…` when it was cut.
    static func truncated(_ text: String, columns limit: Int) -> String {
        guard columns(text) > limit else { return text }
        var result = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let width = isWide(scalar.value) ? 2 : 1
            if used + width > limit - 1 { break }
            result.unicodeScalars.append(scalar)
            used += width
        }
        return result + "…"
    }

    /// The common wide ranges (Hangul Jamo, CJK, Hangul syllables, compatibility ideographs,
    /// full-width forms, emoji); enough for an estimate.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            true
        default:
            false
        }
    }
}
