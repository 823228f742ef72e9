/// What a store tells `/metrics` about itself; nil where a store has no such thing.
package struct StoreStatistics: Sendable {
    /// Sessions in the store.
    package var sessions: Int?
    /// Whether `sessions` may be up to ``sessionCountSeconds`` old (PostgreSQL counts at most that
    /// often: `count(*)` reads the whole table, and every replica is scraped).
    package var sessionsCached = false
    /// SQLite: changes appended to the change log and not yet compacted into the database.
    package var changeLogBacklog: Int?
    /// SQLite: generations compacted, and the time that took (nanoseconds).
    package var compactions: Int?
    package var compactionNanoseconds: Int?
    /// SQLite: the decoded-session cache: its estimated bytes, its bound, its sessions, and
    /// reads it answered or missed.
    package var cacheBytes: Int?
    package var cacheLimitBytes: Int?
    package var cacheSessions: Int?
    package var cacheHits: Int?
    package var cacheMisses: Int?
    /// PostgreSQL: the pool's size, the times a request waited for a connection, the time it
    /// waited (nanoseconds), and the waits that gave up.
    package var poolConnections: Int?
    package var poolWaits: Int?
    package var poolWaitNanoseconds: Int?
    package var poolTimeouts: Int?
    /// PostgreSQL: transactions that committed a group of changes, and the changes they carried.
    package var groupCommits: Int?
    package var groupChanges: Int?

    /// How long PostgreSQL's session count is reused.
    package static let sessionCountSeconds = 15

    package init(sessions: Int? = nil) {
        self.sessions = sessions
    }
}
