/// A request's header fields: lowercased names with their values, in the order received.
///
/// A request carries a handful of fields and a handler asks for two or three of them,
/// so a list searched front to back beats a hashed dictionary: no hashing, one allocation.
/// Repeated fields are joined with `", "` when added (RFC 9110 §5.3).
struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    private var fields: [(name: String, value: String)] = []

    init() {}

    init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Adds a field; `name` is lowercased here unless it is already (ASCII, RFC 9110).
    mutating func add(_ name: String, _ value: String) {
        add(lowercased: Self.lowercased(name), value)
    }

    /// Adds a field whose name the caller has lowercased.
    mutating func add(lowercased name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.name == name }) {
            fields[index].value += ", " + value
        } else {
            fields.append((name, value))
        }
    }

    /// The value of the field named `name` (lowercase), if the request sent it.
    subscript(name: String) -> String? {
        for field in fields where field.name == name { return field.value }
        return nil
    }

    var count: Int { fields.count }

    func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    private static func lowercased(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return name }
        return String(decoding: name.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
