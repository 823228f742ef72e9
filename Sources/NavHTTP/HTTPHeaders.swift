/// A request's header fields: lowercased names with their values, in the order received.
///
/// A request carries a handful of fields and a handler asks for two or three of them,
/// so a list searched front to back beats a hashed dictionary: no hashing, one allocation.
/// Repeated fields are joined with `", "` when added (RFC 9110 §5.3); ``isRepeated(_:)`` tells a
/// field that may be sent once only (`Idempotency-Key`) from one sent twice.
package struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// A struct rather than a tuple: a list of tuples is destroyed through the runtime's
    /// generic tuple code, string by string.
    fileprivate struct Field {
        package var name: String
        package var value: String
        package var repeated = false
    }

    private var fields: [Field] = []

    init() {}

    /// Room for `capacity` fields before the list grows (a request's fields are added one by one).
    package init(reservingCapacity capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    package init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Adds a field; `name` is lowercased (ASCII, RFC 9110).
    package mutating func add(_ name: String, _ value: String) {
        add(name: name.utf8, value)
    }

    /// Adds a field named by the bytes `name`, lowercased as they are copied into a string.
    package mutating func add(name bytes: some Collection<UInt8>, _ value: String) {
        let name = String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return bytes.count
        }
        if let index = fields.firstIndex(where: { $0.name == name }) {
            fields[index].value += ", " + value
            fields[index].repeated = true
        } else {
            fields.append(Field(name: name, value: value))
        }
    }

    /// The value of the field named `name` (lowercase), if the request sent it.
    package subscript(name: String) -> String? {
        for field in fields where field.name == name { return field.value }
        return nil
    }

    /// Whether the request sent the field named `name` (lowercase) more than once.
    package func isRepeated(_ name: String) -> Bool {
        fields.contains { $0.name == name && $0.repeated }
    }

    /// Whether the request sent the field named `name` (lowercase), and more than once, in one
    /// pass and without touching its value: framing checks ask both of each field they look at.
    package func occurrence(_ name: String) -> (sent: Bool, repeated: Bool) {
        for field in fields where field.name == name { return (true, field.repeated) }
        return (false, false)
    }

    package var count: Int { fields.count }

    package struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[Field]>

        package mutating func next() -> (name: String, value: String)? {
            base.next().map { ($0.name, $0.value) }
        }
    }

    package func makeIterator() -> Iterator {
        Iterator(base: fields.makeIterator())
    }
}
