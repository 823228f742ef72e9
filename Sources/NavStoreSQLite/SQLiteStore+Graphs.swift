import NavCore
import NavJSON
import NavSessions

/// Graph documents, one row per uploaded version (`graphs`), written straight to the database
/// and read with the reading connection.
extension SQLiteStore {
    /// Allocates the version here too (one process holds the file, under the writer lock): the next
    /// number after the latest stored one, unless that one already is this document.
    package func storeGraph(_ document: JSONValue, name: String) throws(StoreError) -> (version: Int, stored: Bool) {
        let text = document.jsonString
        return try withWriter { connection throws(StoreError) -> (version: Int, stored: Bool) in
            let latest = try connection.statement("SELECT version, document = ? FROM graphs WHERE name = ? ORDER BY version DESC LIMIT 1")
                .bind(1, text).bind(2, name)
            let found = try latest.step()
            let (version, same) = found ? (Int(latest.int(0)), latest.int(1) == 1) : (0, false)
            latest.reset()
            if same { return (version, false) }
            // Through `noting`, like every other write: a full disk here shows in `/readyz` too.
            try noting(.database) { () throws(StoreError) in
                try connection.statement("INSERT INTO graphs (name, version, document) VALUES (?,?,?)")
                    .bind(1, name).bind(2, Int64(version + 1)).bind(3, text).run()
                // The first graph stored is then the oldest row (a store's first, or an older
                // navd's, whose rows were never removed).
                try Self.recordDefaultGraph(connection)
            }
            return (version + 1, true)
        }
    }

    /// Deletes the version's row, through `noting` like every other write.
    package func removeGraph(_ name: String, version: Int) throws(StoreError) -> Bool {
        try withWriter { connection throws(StoreError) -> Bool in
            try noting(.database) { () throws(StoreError) -> Bool in
                try Self.recordDefaultGraph(connection)
                try connection.statement("DELETE FROM graphs WHERE name = ? AND version = ?")
                    .bind(1, name).bind(2, Int64(version)).run()
                return connection.changes > 0
            }
        }
    }

    package func graph(_ name: String, version: Int) throws(StoreError) -> JSONValue? {
        try withReader { reader throws(StoreError) -> JSONValue? in
            let statement = try reader.statement("SELECT document FROM graphs WHERE name = ? AND version = ?")
                .bind(1, name).bind(2, Int64(version))
            defer { statement.reset() }
            return try statement.step() ? try Self.graphDocument(statement.bytes(0)) : nil
        }
    }

    package func latestGraph(_ name: String, newerThan known: Int) throws(StoreError) -> (document: JSONValue, version: Int)? {
        try withReader { reader throws(StoreError) -> (document: JSONValue, version: Int)? in
            let statement = try reader.statement(
                "SELECT document, version FROM graphs WHERE name = ? AND version > ? ORDER BY version DESC LIMIT 1"
            )
            .bind(1, name).bind(2, Int64(known))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return (try Self.graphDocument(statement.bytes(0)), Int(statement.int(1)))
        }
    }

    package func latestGraphVersions() throws(StoreError) -> [(name: String, version: Int)] {
        try withReader { reader throws(StoreError) -> [(name: String, version: Int)] in
            let statement = try reader.statement("SELECT name, MAX(version) FROM graphs GROUP BY name ORDER BY name")
            defer { statement.reset() }
            var versions: [(name: String, version: Int)] = []
            while try statement.step() { versions.append((statement.text(0), Int(statement.int(1)))) }
            return versions
        }
    }

    /// The graph stored first, as `store_meta.default_graph` records it (written with the first
    /// graph stored). A database written before navd recorded it names it by its oldest row:
    /// rows were never removed then, and the record is written before any row is.
    package func firstGraphName() throws(StoreError) -> String? {
        try withReader { reader throws(StoreError) -> String? in
            let statement = try reader.statement(
                "SELECT value FROM store_meta WHERE key = 'default_graph' UNION ALL SELECT * FROM (SELECT name FROM graphs ORDER BY rowid LIMIT 1)"
            )
            defer { statement.reset() }
            return try statement.step() ? statement.text(0) : nil
        }
    }

    /// Records which graph was stored first, from the oldest row, if not recorded yet: after a
    /// row is stored, and before one is removed (the oldest row may no longer be the first
    /// graph's once it is).
    private static func recordDefaultGraph(_ connection: SQLiteConnection) throws(StoreError) {
        try connection.statement(
            "INSERT OR IGNORE INTO store_meta (key, value) SELECT 'default_graph', name FROM graphs ORDER BY rowid LIMIT 1"
        ).run()
    }

    private static func graphDocument(_ bytes: [UInt8]) throws(StoreError) -> JSONValue {
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw StoreError(message: "a stored graph is not JSON: \(error)")
        }
    }

    package func loadGraphs() throws(StoreError) -> [(document: JSONValue, version: Int)] {
        try withReader { reader throws(StoreError) -> [(document: JSONValue, version: Int)] in
            let statement = try reader.statement("SELECT document, version FROM graphs ORDER BY rowid")
            defer { statement.reset() }
            var graphs: [(document: JSONValue, version: Int)] = []
            while try statement.step() {
                graphs.append((try Self.graphDocument(statement.bytes(0)), Int(statement.int(1))))
            }
            return graphs
        }
    }
}
