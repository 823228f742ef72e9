/// Something printed as one component of a path: a `PathComponent` (params as text) or a `Screen`
/// (params typed). Both print through `canonicalPathText(of:)`, so they cannot disagree.
protocol PathTextComponent {
    associatedtype Value: PathTextValue
    var pathName: String { get }
    var pathSegue: Segue { get }
    var pathContainer: Container { get }
    var pathParams: [String: Value] { get }
}

/// A parameter value as it is written into a path.
protocol PathTextValue {
    /// At least the number of bytes `write(to:)` writes.
    var escapedCapacity: Int { get }
    /// Writes the value's canonical text, percent-encoded where it must be.
    func write(to writer: inout PathTextWriter)
}

extension PathComponent: PathTextComponent {
    var pathName: String { name }
    var pathSegue: Segue { segue }
    var pathContainer: Container { container }
    var pathParams: [String: String] { params }
}

extension Screen: PathTextComponent {
    var pathName: String { scene }
    var pathSegue: Segue { segue }
    var pathContainer: Container { container }
    var pathParams: [String: ParamValue] { params }
}

extension String: PathTextValue {
    var escapedCapacity: Int { 3 * utf8.count }

    func write(to writer: inout PathTextWriter) {
        writer.escaped(self)
    }
}

extension ParamValue: PathTextValue {
    var escapedCapacity: Int {
        switch self {
        case .string(let text): 3 * text.utf8.count
        case .int: 20
        case .bool: 5
        case .number: 3 * text.utf8.count
        }
    }

    func write(to writer: inout PathTextWriter) {
        switch self {
        case .string(let text): writer.escaped(text)
        // The text of an int or a bool never needs escaping.
        case .int(let number): writer.decimal(number)
        case .bool(let flag): writer.utf8(flag ? "true" : "false")
        case .number: writer.escaped(text)
        }
    }
}

/// The canonical text of components from the root: keys sorted, values escaped where they must be,
/// and a root pushed without a navigation container written bare. Written in one pass into the
/// string's own storage after one pass to size it.
///
/// - Parameter bareRoot: whether a first component pushed without a container is written without its
///   `/` (as in a path), or keeps it (a component printed on its own).
func canonicalPathText<Component: PathTextComponent>(of components: [Component], bareRoot: Bool = true) -> String {
    canonicalPathText(of: components, bareRoot: bareRoot, markingAfter: 0).text
}

/// The same, and how many bytes of it the first `marked` components take.
func canonicalPathText<Component: PathTextComponent>(
    of components: [Component], bareRoot: Bool = true, markingAfter marked: Int
) -> (text: String, markedBytes: Int) {
    // Through a buffer, so that each component is read in place rather than copied whole.
    components.withUnsafeBufferPointer { components in
        let capacity = pathTextCapacity(of: components)
        guard capacity > 0 else { return ("", 0) }
        var markedBytes = 0
        let text = String(unsafeUninitializedCapacity: capacity) { buffer in
            var writer = PathTextWriter(buffer)
            for index in components.indices {
                if index == marked { markedBytes = writer.count }
                writer.component(components[index], bare: bareRoot && index == 0)
            }
            if components.count <= marked { markedBytes = writer.count }
            return writer.count
        }
        return (text, markedBytes)
    }
}

/// The texts of a stage before and after a transition that keeps its first `kept` screens and adds
/// `added` on top: the shared beginning is written once and copied.
func canonicalPathTexts(of before: [Screen], keeping kept: Int, adding added: [Screen]) -> (before: String, after: String) {
    let (beforeText, keptBytes) = canonicalPathText(of: before, markingAfter: kept)
    let afterText = added.withUnsafeBufferPointer { added in
        let capacity = keptBytes + pathTextCapacity(of: added)
        guard capacity > 0 else { return "" }
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var writer = PathTextWriter(buffer)
            var source = beforeText
            source.withUTF8 { writer.copy(UnsafeBufferPointer(rebasing: $0.prefix(keptBytes))) }
            for index in added.indices {
                writer.component(added[index], bare: kept == 0 && index == 0)
            }
            return writer.count
        }
    }
    return (beforeText, afterText)
}

/// At least the number of bytes the components' text takes.
private func pathTextCapacity<Component: PathTextComponent>(of components: UnsafeBufferPointer<Component>) -> Int {
    var capacity = 0
    for index in components.indices {
        capacity += 2 + components[index].pathName.utf8.count
        let params = components[index].pathParams
        if !params.isEmpty {
            capacity += 2
            for (key, value) in params { capacity += key.utf8.count + 2 + value.escapedCapacity }
        }
    }
    return capacity
}

/// A value escaped for a path, as text (a link's placeholder filled in).
func escapedPathValue(_ value: String) -> String {
    guard !value.isEmpty else { return "" }
    return String(unsafeUninitializedCapacity: value.escapedCapacity) { buffer in
        var writer = PathTextWriter(buffer)
        writer.escaped(value)
        return writer.count
    }
}

/// Writes path text into a buffer sized beforehand by `canonicalPathText(of:)`. Writes past the end
/// are dropped rather than made: the sizing is an upper bound, and memory safety does not rest on it.
struct PathTextWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    mutating func byte(_ byte: UInt8) {
        guard count < buffer.count else { return }
        buffer[count] = byte
        count += 1
    }

    mutating func utf8(_ text: String) {
        var text = text
        text.withUTF8 { source in
            guard let start = source.baseAddress, let destination = buffer.baseAddress,
                source.count <= buffer.count - count
            else { return }
            (destination + count).update(from: start, count: source.count)
            count += source.count
        }
    }

    /// A value, escaping what would end or confuse it (`,` `(` `)` `%` space, control characters).
    mutating func escaped(_ text: String) {
        var text = text
        text.withUTF8 { source in
            for byte in source {
                if mustEscape(byte) {
                    self.byte(UInt8(ascii: "%"))
                    self.byte(hexDigit(byte >> 4))
                    self.byte(hexDigit(byte & 0xF))
                } else {
                    self.byte(byte)
                }
            }
        }
    }

    /// An integer's decimal digits, as `String(number)` spells them.
    mutating func decimal(_ number: Int) {
        if number < 0 { byte(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits = 1
        var scale: UInt = 1
        while magnitude / scale >= 10 {
            scale *= 10
            digits += 1
        }
        for _ in 0..<digits {
            byte(UInt8(ascii: "0") + UInt8(magnitude / scale))
            magnitude %= scale
            scale /= 10
        }
    }

    /// Bytes already in their final form.
    mutating func copy(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress, let destination = buffer.baseAddress, source.count <= buffer.count - count
        else { return }
        (destination + count).update(from: start, count: source.count)
        count += source.count
    }

    /// A component; `bare` (for a root) leaves out the `/` of a push without a navigation container.
    mutating func component<Component: PathTextComponent>(_ component: Component, bare: Bool) {
        let segue = component.pathSegue
        let container = component.pathContainer
        self.component(
            name: component.pathName, segue: segue, container: container, params: component.pathParams,
            bare: bare && segue == .push && container == .none
        )
    }

    mutating func component<Value: PathTextValue>(
        name: String, segue: Segue, container: Container, params: [String: Value], bare: Bool
    ) {
        switch segue {
        case .push:
            if !bare { byte(UInt8(ascii: "/")) }
        case .modal:
            byte(UInt8(ascii: "!"))
            if container == .navigation { byte(UInt8(ascii: "/")) }
        case .tab:
            byte(UInt8(ascii: "#"))
            if container == .navigation { byte(UInt8(ascii: "/")) }
        }
        utf8(name)
        guard !params.isEmpty else { return }
        byte(UInt8(ascii: "("))
        switch params.count {
        case 1:
            for (key, value) in params { parameter(key, value) }
        case 2:
            // The usual case, ordered without sorting an array.
            var members = params.makeIterator()
            if let one = members.next(), let two = members.next() {
                let (first, second) = one.key < two.key ? (one, two) : (two, one)
                parameter(first.key, first.value)
                byte(UInt8(ascii: ","))
                parameter(second.key, second.value)
            }
        default:
            for (position, member) in params.sorted(by: { $0.key < $1.key }).enumerated() {
                if position > 0 { byte(UInt8(ascii: ",")) }
                parameter(member.key, member.value)
            }
        }
        byte(UInt8(ascii: ")"))
    }

    private mutating func parameter<Value: PathTextValue>(_ key: String, _ value: Value) {
        utf8(key)
        byte(UInt8(ascii: "="))
        value.write(to: &self)
    }
}

@inline(__always) func mustEscape(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: ","), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "%"), UInt8(ascii: " "), 0x7F: true
    case 0..<0x20: true
    default: false
    }
}
