import NavJSON

/// A screen's typed parameters: a small array of key–value pairs kept sorted by key, with the
/// dictionary-like API that readers of `Screen.params` use (subscript by key, `count`, `keys`, `first`,
/// iteration).
///
/// Screens have few parameters (usually one or two), so a sorted array is both smaller and faster
/// than a `Dictionary`: no hashing, one allocation sized to fit, and iteration is already in the
/// canonical (sorted-key) order in which paths, JSON and the wire write parameters.
///
/// Keys are unique and ordered by `String`'s `<`, the order of `keys.sorted()`. Two values are equal
/// when they hold the same keys with equal values, as two dictionaries are.
public struct ScreenParams: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: ParamValue)

    /// Sorted by key, keys unique.
    private var pairs: [Element]

    /// No parameters.
    public init() {
        pairs = []
    }

    /// The entries of a dictionary, sorted by key.
    public init(_ dictionary: [String: ParamValue]) {
        var pairs: [Element] = []
        pairs.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { pairs.append((key: key, value: value)) }
        self.init(unsorted: pairs)
    }

    /// Duplicate keys keep the last value.
    public init(dictionaryLiteral elements: (String, ParamValue)...) {
        var params = ScreenParams()
        for (key, value) in elements { params[key] = value }
        self = params
    }

    /// Pairs with unique keys, in any order.
    init(unsorted pairs: [Element]) {
        var pairs = pairs
        // Insertion sort: parameter lists are short, and most are sorted already.
        if pairs.count > 1 {
            for end in 1..<pairs.count {
                var position = end
                while position > 0, pairs[position].key < pairs[position - 1].key {
                    pairs.swapAt(position, position - 1)
                    position -= 1
                }
            }
        }
        self.pairs = pairs
    }

    /// Pairs already sorted by key with unique keys (the caller guarantees it).
    init(sorted pairs: [Element]) {
        self.pairs = pairs
    }

    // MARK: Collection (positions in key order)

    public var startIndex: Int { 0 }
    public var endIndex: Int { pairs.count }

    public subscript(position: Int) -> Element {
        pairs[position]
    }

    // MARK: Dictionary-like

    /// The value for `key`; setting `nil` removes it.
    public subscript(key: String) -> ParamValue? {
        get {
            for index in pairs.indices where pairs[index].key == key { return pairs[index].value }
            return nil
        }
        set {
            var position = 0
            while position < pairs.count, pairs[position].key < key { position += 1 }
            if position < pairs.count, pairs[position].key == key {
                if let newValue {
                    pairs[position].value = newValue
                } else {
                    pairs.remove(at: position)
                }
            } else if let newValue {
                pairs.insert((key: key, value: newValue), at: position)
            }
        }
    }

    /// The keys, sorted.
    public var keys: LazyMapCollection<ScreenParams, String> {
        lazy.map(\.key)
    }

    /// The values, in the order of their keys.
    public var values: LazyMapCollection<ScreenParams, ParamValue> {
        lazy.map(\.value)
    }

    /// The same keys with their values transformed, as a dictionary.
    public func mapValues<T>(_ transform: (ParamValue) throws -> T) rethrows -> [String: T] {
        var result = [String: T](minimumCapacity: pairs.count)
        for pair in pairs { result[pair.key] = try transform(pair.value) }
        return result
    }

    /// The parameters as a dictionary.
    public var dictionary: [String: ParamValue] {
        mapValues { $0 }
    }

    /// The storage, for code in NavCore that reads the pairs in place.
    var sortedPairs: [Element] { pairs }

    // MARK: Equatable, Hashable

    // Written by hand only because a tuple is not `Equatable`, so `[Element]` cannot synthesise
    // them; they are a true value equality, a dictionary's: every stored field (the pairs) is
    // compared, and nothing is kept beside them. The pairs are sorted by key with unique keys, so
    // two values holding the same keys with equal values hold the same array, whatever order they
    // were built in: comparing and hashing position by position is comparing and hashing the
    // key–value sets, and `==` and `hash(into:)` agree. (`ScreenParamsTests` holds this.)

    /// Equal when they hold the same keys with equal values, as two dictionaries are.
    public static func == (lhs: ScreenParams, rhs: ScreenParams) -> Bool {
        guard lhs.pairs.count == rhs.pairs.count else { return false }
        for index in lhs.pairs.indices {
            guard lhs.pairs[index].key == rhs.pairs[index].key, lhs.pairs[index].value == rhs.pairs[index].value else {
                return false
            }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }
}

extension ScreenParams: CustomStringConvertible {
    /// Like a dictionary's: `["id": NavCore.ParamValue.int(7)]`, keys sorted.
    public var description: String {
        guard !pairs.isEmpty else { return "[:]" }
        return "[" + pairs.map { "\(String(reflecting: $0.key)): \(String(reflecting: $0.value))" }.joined(separator: ", ") + "]"
    }
}
