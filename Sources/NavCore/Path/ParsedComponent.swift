/// What `PathParser` builds: the public `PathComponent` (params in a dictionary) or, for a navigation,
/// a `TextComponent` (params as pairs, no hashing).
protocol ParsedComponent {
    associatedtype Params: ParsedParams
    init(name: String, segue: Segue, container: Container, params: Params)
    var name: String { get }
    var segue: Segue { get }
    var container: Container { get set }
    var params: Params { get }
}

/// The parameters of a parsed component, as the parser adds them.
protocol ParsedParams {
    /// Empty, with room for `count` parameters.
    init(capacity count: Int)
    /// Adds a parameter; `false` (and nothing added) when `key` is already there.
    mutating func add(key: String, value: String) -> Bool
    var count: Int { get }
    /// The text of `key`, for `up(n=K)`.
    func text(of key: String) -> String?
}

extension PathComponent: ParsedComponent {}

extension Dictionary: ParsedParams where Key == String, Value == String {
    // Sized once (`reserveCapacity` is a generic call). `init(minimumCapacity:)` is not free either
    // (an unspecialised call with a runtime metadata lookup, ~240 instructions), so a component
    // without parameters gets the shared empty dictionary instead.
    init(capacity count: Int) {
        if count == 0 {
            self.init()
        } else if count <= emptyParameterDictionaries.count {
            self = emptyParameterDictionaries[count - 1]
        } else {
            self.init(minimumCapacity: count)
        }
    }

    mutating func add(key: String, value: String) -> Bool {
        updateValue(value, forKey: key) == nil
    }

    func text(of key: String) -> String? {
        self[key]
    }
}

/// Empty dictionaries with room for 1, 2, 3 and 4 parameters. A component's dictionary starts as a
/// copy of one: its first insert copies the (empty) storage at that size through the standard
/// library's inlinable copy-on-write path, which this module specialises, instead of calling the
/// unspecialised `init(minimumCapacity:)` (it looks up the storage class's generic metadata on every
/// call, ~425 instructions).
private let emptyParameterDictionaries: [[String: String]] = (1...4).map { [String: String](minimumCapacity: $0) }

/// A parsed path: what `PathExpression` is, over any `ParsedComponent`.
enum ParsedExpression<Component: ParsedComponent> {
    case absolute([Component])
    case relative(ups: Int, components: [Component])
    case up(Int)
}

/// A component as a navigation parses it: parameter texts as pairs in the order written.
///
/// A navigation types each component's texts once and never looks one up by hash, so a dictionary
/// (an allocation with a seeded hash per key) is wasted on it.
struct TextComponent: ParsedComponent {
    var name: String
    var segue: Segue
    var container: Container
    var params: TextParams

    init(name: String, segue: Segue, container: Container = .none, params: TextParams = TextParams(capacity: 0)) {
        self.name = name
        self.segue = segue
        self.container = container
        self.params = params
    }

    /// The screen's component, its params as their canonical texts (already in key order).
    init(_ screen: Screen) {
        var params = TextParams(capacity: screen.params.count)
        for (key, value) in screen.params { params.pairs.append((key: key, value: value.text)) }
        self.init(name: screen.scene, segue: screen.segue, container: screen.container, params: params)
    }

    init(_ component: PathComponent) {
        var params = TextParams(capacity: component.params.count)
        for (key, value) in component.params { params.pairs.append((key: key, value: value)) }
        self.init(name: component.name, segue: component.segue, container: component.container, params: params)
    }

    /// The public form, for messages.
    var pathComponent: PathComponent {
        var texts = [String: String](minimumCapacity: params.count)
        for (key, value) in params.pairs { texts[key] = value }
        return PathComponent(name: name, segue: segue, container: container, params: texts)
    }
}

/// Parameter texts with unique keys, in the order written.
struct TextParams: ParsedParams {
    var pairs: [(key: String, value: String)] = []

    init(capacity count: Int) {
        if count > 0 { pairs.reserveCapacity(count) }
    }

    var count: Int { pairs.count }

    /// The keys, once there are too many to scan (a client may send hundreds).
    private var seen: Set<String>?

    mutating func add(key: String, value: String) -> Bool {
        if pairs.count < 16 {
            // A scan: components have few parameters.
            for index in pairs.indices where pairs[index].key == key { return false }
        } else {
            var keys = seen ?? Set(pairs.lazy.map(\.key))
            seen = nil  // so the insert does not copy the set
            let inserted = keys.insert(key).inserted
            seen = keys
            guard inserted else { return false }
        }
        pairs.append((key: key, value: value))
        return true
    }

    func text(of key: String) -> String? {
        for index in pairs.indices where pairs[index].key == key { return pairs[index].value }
        return nil
    }
}

extension ParsedExpression where Component == TextComponent {
    /// The public form, for messages.
    var pathExpression: PathExpression {
        switch self {
        case .absolute(let components): .absolute(Path(components.map(\.pathComponent)))
        case .relative(let ups, let components): .relative(ups: ups, path: Path(components.map(\.pathComponent)))
        case .up(let count): .up(count)
        }
    }
}
