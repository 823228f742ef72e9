/// How a screen is put on top of the one before it (DeepTransition's path symbols).
public enum Segue: String, Sendable, Hashable, Codable, CaseIterable {
    /// `/`: pushed onto a navigation stack.
    case push = "/"
    /// `!`: presented modally, covering everything under it.
    case modal = "!"
    /// `#`: an inner screen of a tabs container (a tab).
    case tab = "#"
}

/// Whether a screen sits in a navigation container of its own (`/top`, `!/menu`, `#/settings`).
public enum Container: String, Sendable, Hashable, Codable {
    case navigation
    case none
}

/// One step of a path: `!/show_coupon(id=88)`.
public struct PathComponent: Sendable, Hashable, Codable {
    public var name: String
    public var segue: Segue
    public var container: Container
    /// Parameter values as text, decoded; printed with keys sorted.
    public var params: [String: String]

    public init(name: String, segue: Segue = .push, container: Container = .none, params: [String: String] = [:]) {
        self.name = name
        self.segue = segue
        self.container = container
        self.params = params
    }
}

extension PathComponent: CustomStringConvertible {
    /// The component on its own, always with its segue: `/c`, `!/menu`, `#tab(x=1)`.
    public var description: String {
        var text = ""
        write(to: &text, bare: false)
        return text
    }

    /// Writes the component; `bare` leaves out the `/` of a root pushed without a navigation container.
    func write(to text: inout String, bare: Bool) {
        switch segue {
        case .push:
            if !bare { text.append("/") }
        case .modal, .tab:
            text.append(segue.rawValue)
            if container == .navigation { text.append("/") }
        }
        text.append(name)
        guard !params.isEmpty else { return }
        text.append("(")
        for (position, key) in params.keys.sorted().enumerated() {
            if position > 0 { text.append(",") }
            text.append(key)
            text.append("=")
            appendPercentEncodedValue(params[key] ?? "", to: &text)
        }
        text.append(")")
    }
}

/// Escapes what would end or confuse a parameter value; everything else stays readable.
func appendPercentEncodedValue(_ value: String, to text: inout String) {
    var needsEscape = false
    for byte in value.utf8 where mustEscape(byte) {
        needsEscape = true
        break
    }
    guard needsEscape else {
        text.append(value)
        return
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(value.utf8.count + 8)
    for byte in value.utf8 {
        if mustEscape(byte) {
            bytes.append(UInt8(ascii: "%"))
            bytes.append(hexDigit(byte >> 4))
            bytes.append(hexDigit(byte & 0xF))
        } else {
            bytes.append(byte)
        }
    }
    text.append(String(decoding: bytes, as: UTF8.self))
}

@inline(__always) private func mustEscape(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: ","), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "%"), UInt8(ascii: " "), 0x7F: true
    case 0..<0x20: true
    default: false
    }
}

/// The characters a scene name or parameter key may use.
@inline(__always) func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
        true
    default: false
    }
}

extension String {
    /// Whether this is a valid scene name or parameter key: `[A-Za-z0-9_.-]+`, and not `.` or `..`.
    public var isValidPathName: Bool {
        !isEmpty && self != "." && self != ".." && utf8.allSatisfy(isNameByte)
    }
}
