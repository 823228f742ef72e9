/// What another process did to a session, as a store shared by several navd processes tells it
/// (docs/design.md, "Across processes").
package struct ChangeNotice: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        /// Changed; its last event now has this `seq`.
        case changed(lastSeq: Int)
        case deleted
        case expired
    }

    package var id: String
    package var kind: Kind

    package init(id: String, kind: Kind) {
        self.id = id
        self.kind = kind
    }
}

/// A store that several navd processes share, and that tells each of them what the others
/// changed, so that every process's watchers follow every change.
package protocol ChangeFeed: AnyObject, Sendable {
    /// Starts telling `handler` of other processes' changes, on a thread of the store's own,
    /// until the store closes. `handler(nil)` means notices may have been missed (the feed's
    /// connection was lost and is back): whoever follows a session should look in the store.
    func follow(_ handler: @escaping @Sendable (ChangeNotice?) -> Void)
}
