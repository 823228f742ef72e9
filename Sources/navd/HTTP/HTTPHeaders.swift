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

    /// Adds a field; `name` is lowercased (ASCII, RFC 9110).
    mutating func add(_ name: String, _ value: String) {
        add(name: name.utf8, value)
    }

    /// Adds a field named by the bytes `name`, lowercased as they are copied into a string.
    mutating func add(name bytes: some Collection<UInt8>, _ value: String) {
        let name = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return bytes.count
        }
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
}
