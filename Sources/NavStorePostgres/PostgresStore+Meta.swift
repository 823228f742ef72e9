import NavSessions

/// ``MetaStore`` on `store_meta` (`key TEXT PRIMARY KEY, value TEXT`): each compare-and-set is
/// one statement, so two processes never both succeed.
extension PostgresStore {
    package func metaValue(_ key: String) throws(StoreError) -> String? {
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute("SELECT value FROM store_meta WHERE key = $1", [key], prepare: true)
        }
        return result.rowCount == 1 ? result.text(0, 0) : nil
    }

    package func replaceMetaValue(_ key: String, with value: String?, ifCurrent current: String?) throws(StoreError) -> Bool {
        let sql: String
        let parameters: [String?]
        switch (value, current) {
        case (nil, nil):
            return try metaValue(key) == nil
        case (let value?, nil):
            sql = "INSERT INTO store_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1"
            parameters = [key, value]
        case (let value?, let current?):
            sql = "UPDATE store_meta SET value = $2 WHERE key = $1 AND value = $3 RETURNING 1"
            parameters = [key, value, current]
        case (nil, let current?):
            sql = "DELETE FROM store_meta WHERE key = $1 AND value = $2 RETURNING 1"
            parameters = [key, current]
        }
        let result = try pool.with { connection throws(StoreError) in
            try connection.execute(sql, parameters, prepare: true)
        }
        return result.rowCount == 1
    }
}
