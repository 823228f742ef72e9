/// A path that does not follow the grammar, with the offset of the first offending character.
public struct PathError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Offset in Unicode scalars from the start of the path text.
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at offset \(offset)" }
}
