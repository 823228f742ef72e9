import NavSessions

/// ``MetaStore`` on `store_meta`. The table's `value` column was declared INTEGER, so text that
/// looks like a number would be stored as one and read back changed (`1.10` as `1.1`): values are
/// written as blobs, which SQLite stores as given whatever the column's affinity, and compared as
/// blobs. Reads and writes go through the writing connection, inside one transaction for a
/// compare-and-set.
extension SQLiteStore {
    package func metaValue(_ key: String) throws(StoreError) -> String? {
        try withWriter { connection throws(StoreError) -> String? in
            try Self.metaValue(key, connection)
        }
    }

    package func replaceMetaValue(_ key: String, with value: String?, ifCurrent current: String?) throws(StoreError) -> Bool {
        try noting(.database) { () throws(StoreError) -> Bool in
            try withWriter { connection throws(StoreError) -> Bool in
                try connection.transaction { () throws(StoreError) -> Bool in
                    guard try Self.metaValue(key, connection) == current else { return false }
                    if let value {
                        let statement = try connection.statement(
                            "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                        try statement.bind(1, key)
                        try Self.bindValue(value, at: 2, statement)
                        try statement.run()
                    } else {
                        try connection.statement("DELETE FROM store_meta WHERE key = ?").bind(1, key).run()
                    }
                    return true
                }
            }
        }
    }

    private static func metaValue(_ key: String, _ connection: SQLiteConnection) throws(StoreError) -> String? {
        let statement = try connection.statement("SELECT CAST(value AS TEXT) FROM store_meta WHERE key = ?").bind(1, key)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    private static func bindValue(_ value: String, at index: Int32, _ statement: SQLiteConnection.Statement) throws(StoreError) {
        // An empty blob would bind as NULL: the empty text is no number either.
        if value.isEmpty {
            try statement.bind(index, value)
        } else {
            try statement.bind(index, Array(value.utf8))
        }
    }
}
