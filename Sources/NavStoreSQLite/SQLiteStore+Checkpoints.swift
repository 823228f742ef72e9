import NavSessions

/// Sessions' snapshots at past versions (``CheckpointStore``), in the `feed_checkpoints` table:
/// written on the writing connection when a change reaches a multiple of the checkpoint interval
/// (outside the change's own write: a checkpoint is a shortcut, not the change), removed with the
/// records they stand before by the feed's purges and sweep.
extension SQLiteStore: CheckpointStore {
    package func keepCheckpoint(of id: String, version: Int, snapshot: [UInt8], within maxBytes: Int) throws(StoreError) {
        let trimming = checkpointTrimming.isDue(writing: snapshot.count, within: maxBytes)
        try withWriter { connection throws(StoreError) in
            try noting(.database) { () throws(StoreError) in
                try connection.statement("INSERT OR IGNORE INTO feed_checkpoints (session_id, version, snapshot) VALUES (?, ?, ?)")
                    .bind(1, id).bind(2, Int64(version)).bind(3, utf8: snapshot).run()
                if trimming { try Self.trimCheckpoints(maxBytes: maxBytes, connection) }
            }
        }
    }

    package func checkpoint(of id: String, below version: Int) throws(StoreError) -> (version: Int, snapshot: [UInt8])? {
        try withReader { reader throws(StoreError) -> (version: Int, snapshot: [UInt8])? in
            let statement = try reader.statement(
                "SELECT version, snapshot FROM feed_checkpoints WHERE session_id = ? AND version < ? ORDER BY version DESC LIMIT 1")
            try statement.bind(1, id).bind(2, Int64(version))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return (Int(statement.int(0)), statement.bytes(1))
        }
    }

    /// In the sweep's transaction, after its records are gone: the checkpoints that can no longer
    /// be a base — their session ended, or the record after them swept (`swept`: each session's
    /// newest version whose record the sweep removed; a session's records go oldest first, so
    /// what is left of its records starts right after that version) — and then the oldest kept
    /// while their bytes exceed `maxBytes`.
    static func sweepCheckpoints(after swept: [String: Int64] = [:], maxBytes: Int, _ connection: SQLiteConnection)
        throws(StoreError)
    {
        try connection.statement(
            "DELETE FROM feed_checkpoints WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE sessions.id = feed_checkpoints.session_id)"
        ).run()
        for (id, version) in swept.sorted(by: { $0.key < $1.key }) {
            try connection.statement("DELETE FROM feed_checkpoints WHERE session_id = ? AND version < ?").bind(1, id).bind(2, version).run()
        }
        try trimCheckpoints(maxBytes: maxBytes, connection)
    }

    /// The oldest checkpoints kept, while all of them take more than `maxBytes`.
    static func trimCheckpoints(maxBytes: Int, _ connection: SQLiteConnection) throws(StoreError) {
        let newest = try connection.statement("SELECT rowid, length(snapshot) FROM feed_checkpoints ORDER BY rowid DESC")
        var total = 0
        var oldestOver: Int64?
        while try newest.step() {
            total += Int(newest.int(1))
            if total > maxBytes {
                oldestOver = newest.int(0)
                break
            }
        }
        newest.reset()
        if let oldestOver { try connection.statement("DELETE FROM feed_checkpoints WHERE rowid <= ?").bind(1, oldestOver).run() }
    }

    /// In a purge's transaction: every checkpoint of the sessions whose records it removes (a
    /// snapshot holds the session's context, which the purge is there to forget).
    static func purgeCheckpoints(of sessions: Set<String>, _ connection: SQLiteConnection) throws(StoreError) {
        for id in sessions.sorted() {
            try connection.statement("DELETE FROM feed_checkpoints WHERE session_id = ?").bind(1, id).run()
        }
    }
}
