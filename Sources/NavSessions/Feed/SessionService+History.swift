import NavCore
import NavJSON

/// A session's history (docs/design.md, "History"): its own retained feed records, in the full
/// form, read with its token, its watch token or the admin token.
extension SessionService {
    /// A page of a session's history: its records after a version, oldest first.
    package struct HistoryPage: Sendable {
        package var entries: [FeedEntry]
        /// The version of the session's oldest retained record; nil when none is retained.
        package var oldest: Int?
        /// The last version returned; the `after` given when the page is empty.
        package var next: Int
    }

    /// Session `id`'s records with a version above `after`, at most `limit` and within
    /// ``FeedPage/maxBytes``, in the full form.
    /// The session's token, its watch token or the admin token opens it, refused exactly as the
    /// view is (``read(_:credentials:access:forChange:)``); the admin token also reads an ended
    /// session's history while its records are retained.
    /// - Throws: 404 `not_found` when the feed is off (`--feed-retention 0`): nothing is kept.
    package func history(of id: String, credentials: Credentials, after: Int, limit: Int) throws(ServiceError) -> HistoryPage {
        do {
            _ = try read(id, credentials: credentials, access: .read)
        } catch let error where error.code == .sessionNotFound {
            // Only the admin token learns that a session is gone: it reads what is retained of it.
            guard configuration.feed != nil, SessionID.isValid(id),
                try !storeCall({ () throws(StoreError) in try store.history(of: id, after: 0, limit: 1) }).isEmpty
            else { throw error }
        }
        guard configuration.feed != nil else {
            throw ServiceError(.notFound, "the feed is off (--feed-retention 0): no history is kept")
        }
        var entries = try storeCall { () throws(StoreError) in try store.history(of: id, after: after, limit: limit) }
        entries.removeLast(entries.count - FeedPage.count(within: entries))
        let oldest: Int?
        if after == 0, let first = entries.first {
            oldest = first.version
        } else {
            oldest = try storeCall { () throws(StoreError) in try store.history(of: id, after: 0, limit: 1) }.first?.version
        }
        return HistoryPage(entries: entries, oldest: oldest, next: entries.last?.version ?? after)
    }
}
