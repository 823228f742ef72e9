/// The graph's scenes by name, for the lookups every navigation makes (one or two per screen).
///
/// A `[String: SceneEntry]` hashes each name with the standard library's seeded SipHash, about
/// 300 instructions a lookup. The names here come from the graph, not from clients, so a plain
/// FNV-1a hash over the name's bytes is enough: open addressing, at most half full.
struct SceneTable: Sendable {
    private let keys: [String]
    private let entries: [SceneEntry]
    /// `index + 1` into `keys`/`entries`, `0` for an empty slot; a power of two long.
    private let slots: [Int32]

    /// - Parameters:
    ///   - globalLinks: the graph's global links, shared by each entry's `actionLinks`.
    ///   - positions: their positions in `globalLinks`, by name.
    init(_ scenes: [String: Scene], globalLinks: [Actions.Link] = [], positions: [String: Int] = [:]) {
        let names = scenes.keys.sorted()
        var keys: [String] = []
        var entries: [SceneEntry] = []
        keys.reserveCapacity(names.count)
        entries.reserveCapacity(names.count)
        var size = 8
        while size < 2 * names.count { size *= 2 }
        var slots = [Int32](repeating: 0, count: size)
        for name in names {
            guard let scene = scenes[name] else { continue }
            keys.append(name)
            entries.append(SceneEntry(scene, index: entries.count, globalLinks: globalLinks, positions: positions))
            var slot = Self.hash(name) & (size - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (size - 1) }
            slots[slot] = Int32(keys.count)
        }
        self.keys = keys
        self.entries = entries
        self.slots = slots
    }

    /// The entry named `name`, first tried at `hint` (an entry's `index`, which a screen keeps): when
    /// the entry there has that name, no hashing or probing. A hint from another table (a screen made
    /// on an earlier graph) or none (`-1`) falls back to the lookup by name.
    @inline(__always)
    subscript(name: String, hint hint: Int32) -> SceneEntry? {
        let index = Int(hint)
        if index >= 0, index < keys.count, keys[index] == name { return entries[index] }
        return self[name]
    }

    subscript(name: String) -> SceneEntry? {
        let mask = slots.count - 1
        var slot = Self.hash(name) & mask
        while true {
            let stored = Int(slots[slot])
            guard stored != 0 else { return nil }
            if keys[stored - 1] == name { return entries[stored - 1] }
            slot = (slot + 1) & mask
        }
    }

    /// How many link values the entries hold between them (each entry's own list), for the
    /// tests that hold a graph's memory to its scenes plus its links.
    var storedLinkCount: Int {
        entries.reduce(0) { $0 + $1.storedLinkCount }
    }

    /// FNV-1a over the UTF-8 bytes (read in place; a small string is copied to the stack).
    @inline(__always)
    private static func hash(_ name: String) -> Int {
        var name = name
        return name.withUTF8 { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return Int(truncatingIfNeeded: hash ^ (hash >> 32))
        }
    }
}
