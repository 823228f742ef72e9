/// A hint or cache kept inside a value for speed, and not part of that value: any two are equal
/// and it adds nothing to a hash.
///
/// A type that stores one (`@Cached var stageText: String?`) keeps its synthesised `Equatable` and
/// `Hashable`: every other stored field is compared and hashed, a field added later included,
/// while what is only known about the value (a scene's index, a stage's text) is not. Whatever is
/// kept in one must follow from the value's other fields, or be checked before use.
@propertyWrapper
struct Cached<Value>: Hashable {
    var wrappedValue: Value

    @inline(__always)
    init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }

    /// Always: a cache says nothing about the value it is kept in.
    @inline(__always)
    static func == (lhs: Cached, rhs: Cached) -> Bool {
        true
    }

    /// Nothing, as equal values must hash alike.
    @inline(__always)
    func hash(into hasher: inout Hasher) {}
}

extension Cached: Sendable where Value: Sendable {}
