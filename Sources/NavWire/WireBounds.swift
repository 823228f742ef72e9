import NavJSON

extension JSONValue {
    /// How deep a document navd writes may nest: a client's values (at most
    /// ``JSONValue/maximumDepth``) sit under a session view or a snapshot, a screen, and up to one
    /// tab bar per stage level. Whoever reads what navd wrote (a store reading its snapshot, the
    /// CLI reading an answer or a streamed view) reads with this bound, not the client's: a view
    /// navd answered is never too deep for navd's own tools.
    package static let maximumViewDepth = JSONValue.maximumDepth + 8 * 64
}
