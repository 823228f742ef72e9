import NavJSON

/// Something printed as one component of a path: a `PathComponent` (params as text) or a `Screen`
/// (params typed). Both print through `canonicalPathText(of:)`, so they cannot disagree.
protocol PathTextComponent {
    /// At least the number of bytes `write(_:bare:to:)` writes.
    static func pathTextCapacity(of component: UnsafePointer<Self>) -> Int
    /// Writes the component read in place (a method called on a copied element would copy every
    /// field of a `Screen`); `bare` (for a root) leaves out the `/` of a push without a container.
    static func writePathText(of component: UnsafePointer<Self>, bare: Bool, to writer: inout PathTextWriter)
}

/// A parameter value as it is written into a path.
protocol PathTextValue {
    /// At least the number of bytes `write(to:)` writes.
    var escapedCapacity: Int { get }
    /// Writes the value's canonical text, percent-encoded where it must be.
    func write(to writer: inout PathTextWriter)
}

extension PathComponent: PathTextComponent {
    static func pathTextCapacity(of component: UnsafePointer<PathComponent>) -> Int {
        2 + component.pointee.name.utf8.count + dictionaryParamsCapacity(component.pointee.params)
    }

    static func writePathText(of component: UnsafePointer<PathComponent>, bare: Bool, to writer: inout PathTextWriter) {
        let (segue, container) = (component.pointee.segue, component.pointee.container)
        writer.head(name: component.pointee.name, segue: segue, container: container, bare: bare && segue == .push && container == .none)
        writer.params(component.pointee.params)
    }
}

extension Screen: PathTextComponent {
    static func pathTextCapacity(of screen: UnsafePointer<Screen>) -> Int {
        var capacity = 2 + screen.pointee.scene.utf8.count
        guard !screen.pointee.params.isEmpty else { return capacity }
        capacity += 2
        for (key, value) in screen.pointee.params { capacity += key.utf8.count + 2 + value.escapedCapacity }
        return capacity
    }

    static func writePathText(of screen: UnsafePointer<Screen>, bare: Bool, to writer: inout PathTextWriter) {
        let (segue, container) = (screen.pointee.segue, screen.pointee.container)
        writer.head(name: screen.pointee.scene, segue: segue, container: container, bare: bare && segue == .push && container == .none)
        writer.params(screen.pointee.params)
    }
}

/// At least the number of bytes `(key=value,…)` takes for these parameters.
private func dictionaryParamsCapacity<Value: PathTextValue>(_ params: [String: Value]) -> Int {
    guard !params.isEmpty else { return 0 }
    var capacity = 2
    for (key, value) in params { capacity += key.utf8.count + 2 + value.escapedCapacity }
    return capacity
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
/// and a root pushed without a navigation container written bare.
///
/// Written into a buffer on the stack and copied into the string once; a text too long for it is
/// sized first and written again straight into the string's storage.
///
/// - Parameter bareRoot: whether a first component pushed without a container is written without its
///   `/` (as in a path), or keeps it (a component printed on its own).
func canonicalPathText<Component: PathTextComponent>(of components: [Component], bareRoot: Bool = true) -> String {
    // Through a buffer, so that each component is read in place rather than copied whole.
    components.withUnsafeBufferPointer { components in
        let text: String? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: pathTextScratchBytes) { scratch in
            var writer = PathTextWriter(scratch)
            writer.components(components, bareRoot: bareRoot)
            return writer.overflowed ? nil : writer.text
        }
        if let text { return text }
        let capacity = pathTextCapacity(of: components)
        guard capacity > 0 else { return "" }
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var writer = PathTextWriter(buffer)
            writer.components(components, bareRoot: bareRoot)
            return writer.count
        }
    }
}

/// The bytes of stack a path text is first written into (most paths are far shorter).
private let pathTextScratchBytes = 1024

/// The texts of a stage before and after a transition that keeps its first `kept` screens and adds
/// `added` on top: the shared beginning is written once.
func canonicalPathTexts(of before: [Screen], keeping kept: Int, adding added: ArraySlice<Screen>) -> (before: String, after: String) {
    let texts: (String, String)? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: pathTextScratchBytes) { scratch in
        var writer = PathTextWriter(scratch)
        var keptBytes = 0
        before.withUnsafeBufferPointer { screens in
            for index in screens.indices {
                if index == kept { keptBytes = writer.count }
                writer.component(of: screens, at: index, bare: index == 0)
            }
            if screens.count <= kept { keptBytes = writer.count }
        }
        guard !writer.overflowed else { return nil }
        let beforeText = writer.text
        writer.rewind(to: keptBytes)
        added.withUnsafeBufferPointer { screens in
            for index in screens.indices {
                writer.component(of: screens, at: index, bare: kept == 0 && index == 0)
            }
        }
        guard !writer.overflowed else { return nil }
        return (beforeText, writer.text)
    }
    if let texts { return texts }
    let prefix = before.prefix(kept)
    return (canonicalPathText(of: before), canonicalPathText(of: Array(prefix) + added))
}

/// The same, when the text of the stage before is already known (`SessionState.stageText`): only the
/// screens removed are written, to be measured, and the text after is the known text's kept
/// beginning followed by the added screens.
///
/// - Parameter text: `canonicalPathText(of: before)`, or `nil` when it is not known.
func canonicalPathTexts(
    of before: [Screen], text: String?, keeping kept: Int, adding added: ArraySlice<Screen>
) -> (before: String, after: String) {
    guard let text else { return canonicalPathTexts(of: before, keeping: kept, adding: added) }
    let after: String? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: pathTextScratchBytes) { scratch in
        var writer = PathTextWriter(scratch)
        let textBytes = text.utf8.count
        var keptBytes = kept <= 0 ? 0 : textBytes
        if kept > 0, kept < before.count {
            // The removed screens' text, written where the text after goes, only for its length.
            before.withUnsafeBufferPointer { screens in
                for index in kept..<screens.count { writer.component(of: screens, at: index, bare: false) }
            }
            guard !writer.overflowed, writer.count <= textBytes else { return nil }
            keptBytes = textBytes - writer.count
            writer.rewind(to: 0)
        }
        writer.utf8(text, prefix: keptBytes)
        added.withUnsafeBufferPointer { screens in
            for index in screens.indices {
                writer.component(of: screens, at: index, bare: kept <= 0 && index == 0)
            }
        }
        guard !writer.overflowed else { return nil }
        return writer.text
    }
    if let after { return (text, after) }
    return (text, canonicalPathTexts(of: before, keeping: kept, adding: added).after)
}

/// At least the number of bytes the components' text takes.
private func pathTextCapacity<Component: PathTextComponent>(of components: UnsafeBufferPointer<Component>) -> Int {
    var capacity = 0
    guard let base = components.baseAddress else { return 0 }
    for index in components.indices { capacity += Component.pathTextCapacity(of: base + index) }
    return capacity
}

/// A value escaped for a path, as text (a link's placeholder filled in): every byte but the name
/// bytes `A-Z a-z 0-9 _ . -` percent-encoded, and every byte of `.`, `..` and `up`, so that whatever
/// a client sends stays one value wherever the template puts it: `/ ! # ^ = ( ) ,` cannot add a
/// component or a parameter, `..` and `up` cannot go up, and in a name's place anything but a name
/// is an invalid name. (In a value's place every escape reads back as the value sent.)
func escapedPathValue(_ value: String) -> String {
    guard !value.isEmpty else { return "" }
    let syntax = value == "." || value == ".." || value == "up"
    return String(unsafeUninitializedCapacity: 3 * value.utf8.count) { buffer in
        var count = 0
        for byte in value.utf8 {
            if isNameByte(byte), !syntax {
                buffer[count] = byte
                count += 1
            } else {
                buffer[count] = UInt8(ascii: "%")
                buffer[count + 1] = Hex.upperDigit(byte >> 4)
                buffer[count + 2] = Hex.upperDigit(byte & 0xF)
                count += 3
            }
        }
        return count
    }
}

/// Writes path text into a buffer sized beforehand by `canonicalPathText(of:)`. Writes past the end
/// are dropped rather than made: the sizing is an upper bound, and memory safety does not rest on it.
struct PathTextWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0
    /// Whether a write did not fit (and was dropped).
    private(set) var overflowed = false

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// What was written, as a string.
    var text: String {
        utf8String(UnsafeBufferPointer(rebasing: buffer[..<count]))
    }

    /// Goes back to an earlier `count`, to write something else after the bytes before it.
    mutating func rewind(to count: Int) {
        self.count = min(max(0, count), self.count)
    }

    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        guard count < buffer.count else {
            overflowed = true
            return
        }
        buffer[count] = byte
        count += 1
    }

    /// A text's bytes as they are.
    @inline(__always)
    mutating func utf8(_ text: String) {
        text.withUTF8Bytes { copy($0) }
    }

    /// The first `prefix` bytes of a text (all of it when it is shorter).
    mutating func utf8(_ text: String, prefix: Int) {
        guard prefix > 0 else { return }
        text.withUTF8Bytes { copy(UnsafeBufferPointer(rebasing: $0.prefix(prefix))) }
    }

    /// Components from the root; see `canonicalPathText(of:bareRoot:)`.
    mutating func components<Component: PathTextComponent>(_ components: UnsafeBufferPointer<Component>, bareRoot: Bool) {
        for index in components.indices {
            component(of: components, at: index, bare: bareRoot && index == 0)
        }
    }

    /// A value, escaping what would end or confuse it (`,` `(` `)` `%` space, control characters).
    mutating func escaped(_ text: String) {
        text.withUTF8Bytes { source in
            for byte in source { escaped(byte) }
        }
    }

    @inline(__always)
    private mutating func escaped(_ byte: UInt8) {
        if mustEscape(byte) {
            self.byte(UInt8(ascii: "%"))
            self.byte(Hex.upperDigit(byte >> 4))
            self.byte(Hex.upperDigit(byte & 0xF))
        } else {
            self.byte(byte)
        }
    }

    /// An integer's decimal digits, as `String(number)` spells them.
    mutating func decimal(_ number: Int) {
        if number < 0 { byte(UInt8(ascii: "-")) }
        let digits = DecimalDigits.count(number.magnitude)
        guard digits <= buffer.count - count else {
            overflowed = true
            return
        }
        DecimalDigits.write(number.magnitude, digits: digits, into: buffer, at: count)
        count += digits
    }

    /// Bytes already in their final form.
    @inline(__always)
    mutating func copy(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress, let destination = buffer.baseAddress else { return }
        guard source.count <= buffer.count - count else {
            overflowed = true
            return
        }
        let target = destination + count
        if source.count <= 16 {
            // Names and keys are short: a plain loop beats a call to memmove.
            var offset = 0
            while offset < source.count {
                target[offset] = start[offset]
                offset &+= 1
            }
        } else {
            target.update(from: start, count: source.count)
        }
        count += source.count
    }

    /// The component at `index`, read in place; `bare` (for a root) leaves out the `/` of a push
    /// without a navigation container.
    mutating func component<Component: PathTextComponent>(
        of components: UnsafeBufferPointer<Component>, at index: Int, bare: Bool
    ) {
        guard let base = components.baseAddress else { return }
        Component.writePathText(of: base + index, bare: bare, to: &self)
    }

    /// A component's segue, container mark and name.
    mutating func head(name: String, segue: Segue, container: Container, bare: Bool) {
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
    }

    /// `(key=value,…)` of typed parameters, already in key order; nothing when there are none.
    mutating func params(_ params: ScreenParams) {
        guard !params.isEmpty else { return }
        byte(UInt8(ascii: "("))
        // Read in place: `params[index]` copies the pair (a retain and a release of each text).
        params.sortedPairs.withUnsafeBufferPointer { pairs in
            guard let base = pairs.baseAddress else { return }
            for index in pairs.indices {
                if index > 0 { byte(UInt8(ascii: ",")) }
                utf8(base[index].key)
                byte(UInt8(ascii: "="))
                base[index].value.write(to: &self)
            }
        }
        byte(UInt8(ascii: ")"))
    }

    /// `(key=value,…)` of a dictionary, keys sorted; nothing when it is empty.
    mutating func params<Value: PathTextValue>(_ params: [String: Value]) {
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
