/// A code clients match on (a refusal's, a graph issue's): it is spelled as its case's name in
/// snake_case (`invalidPath` is `invalid_path`, `invalidJSON` is `invalid_json`), by this one
/// rule, so that no code can be spelled apart from its name.
public protocol StableCode: CaseIterable, Hashable, Sendable {}

extension StableCode {
    /// The code as clients see it: the case's name in snake_case.
    public var name: String {
        let name = Array(String(describing: self).utf8)
        var spelling: [UInt8] = []
        spelling.reserveCapacity(name.count + 4)
        for (index, byte) in name.enumerated() {
            guard Self.isUpper(byte) else {
                spelling.append(byte)
                continue
            }
            // A word starts at an upper-case letter after a lower-case one, or at the last letter
            // of an upper-case run that a lower-case one follows (`JSONPointer`: `json_pointer`).
            if index > 0,
                !Self.isUpper(name[index - 1]) || (index + 1 < name.count && !Self.isUpper(name[index + 1]))
            {
                spelling.append(UInt8(ascii: "_"))
            }
            spelling.append(byte | 0x20)
        }
        return String(decoding: spelling, as: UTF8.self)
    }

    private static func isUpper(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}
