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
        canonicalPathText(of: [self], bareRoot: false)
    }
}

/// The characters a scene name or parameter key may use.
@inline(__always) func isNameByte(_ byte: UInt8) -> Bool {
    // One bit per ASCII byte, in two words (0–63, 64–127): a shift and a test instead of a
    // comparison per range. Bytes from 128 up are never name bytes.
    guard byte < 128 else { return false }
    let word = byte < 64 ? nameBytesBelow64 : nameBytesFrom64
    return word >> UInt64(byte & 63) & 1 != 0
}

/// `-`, `.` and `0`–`9` (bits 45, 46, 48–57).
private let nameBytesBelow64: UInt64 = 0x03FF_6000_0000_0000
/// `A`–`Z`, `_` and `a`–`z` (bits 65–90, 95, 97–122, less 64).
private let nameBytesFrom64: UInt64 = 0x07FF_FFFE_87FF_FFFE

extension String {
    /// Whether this is a valid scene name or parameter key: `[A-Za-z0-9_.-]+`, and not `.` or `..`.
    public var isValidPathName: Bool {
        !isEmpty && self != "." && self != ".." && utf8.allSatisfy(isNameByte)
    }
}
