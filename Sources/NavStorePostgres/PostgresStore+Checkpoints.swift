import NavSessions

/// Sessions' snapshots at past versions (``CheckpointStore``), in the `feed_checkpoints` table,
/// which every process of the database shares: written after the change that reaches a multiple
/// of the checkpoint interval has committed (a checkpoint is a shortcut, not part of the change),
/// removed with the records they stand before by the feed's purges and sweep.
extension PostgresStore: CheckpointStore {
    package func keepCheckpoint(of id: String, version: Int, snapshot: [UInt8], within maxBytes: Int) throws(StoreError) {
        let trimming = checkpointTrimming.isDue(writing: snapshot.count, within: maxBytes)
        try pool.with { connection throws(StoreError) in
            _ = try connection.execute(
                "INSERT INTO feed_checkpoints (session_id, version, snapshot) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                [id, String(version), String(decoding: snapshot, as: UTF8.self)], prepare: true)
            if trimming { try Self.trimCheckpoints(maxBytes: maxBytes, on: connection) }
        }
    }

    package func checkpoint(of id: String, below version: Int) throws(StoreError) -> (version: Int, snapshot: [UInt8])? {
        guard SessionID.isValid(id) else { return nil }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(
                "SELECT version, snapshot FROM feed_checkpoints WHERE session_id = $1 AND version < $2 ORDER BY version DESC LIMIT 1",
                [id, String(version)], prepare: true)
        }
        guard result.rowCount == 1 else { return nil }
        return (Int(result.int(0, 0)), Array(result.text(0, 1).utf8))
    }

    /// In the sweep's transaction, after its records are gone: the checkpoints that can no longer
    /// be a base — their session ended, or a record after them swept — and then the oldest kept
    /// while their bytes exceed `maxBytes`.
    static func sweepCheckpoints(maxBytes: Int, on connection: PostgresConnection) throws(StoreError) {
        try connection.execute(
            """
            DELETE FROM feed_checkpoints c
            WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = c.session_id)
                OR c.version + 1 < COALESCE((SELECT min(f.version) FROM feed f WHERE f.session_id = c.session_id), 9223372036854775807)
            """,
            prepare: true, reconnecting: false)
        try trimCheckpoints(maxBytes: maxBytes, on: connection)
    }

    /// The oldest checkpoints kept, while all of them take more than `maxBytes`.
    static func trimCheckpoints(maxBytes: Int, on connection: PostgresConnection) throws(StoreError) {
        try connection.execute(
            """
            DELETE FROM feed_checkpoints WHERE kept <= (
                SELECT kept FROM (SELECT kept, sum(octet_length(snapshot)) OVER (ORDER BY kept DESC) AS total FROM feed_checkpoints) newest
                WHERE total > $1::bigint ORDER BY kept DESC LIMIT 1)
            """,
            [String(maxBytes)], prepare: true, reconnecting: false)
    }
}
