import CSQLite
import NavJSON
import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// One SQLite connection (`sqlite3 *`), owned by this object and closed in `close()`/`deinit`.
///
/// Not thread-safe by itself: ``SQLiteStore`` uses each of its two connections only while holding
/// that connection's lock.
package final class SQLiteConnection {
    private var handle: OpaquePointer?
    private var statements: [String: Statement] = [:]
    /// The same statements, for SQL known when navd is built, by its text's address
    /// (``statement(static:)``): hashing a long text took 3,000 instructions a statement.
    private var staticStatements: [UInt: Statement] = [:]
    /// The statements every transaction runs, kept at hand rather than looked up by their text.
    private var begin: Statement?
    private var commit: Statement?

    /// Opens (creating if needed) the database file (`sqlite3_open_v2`).
    /// - Parameter vfs: the SQLite VFS by name (nil: the default, `unix`).
    package init(path: String, vfs: String? = nil) throws(StoreError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, vfs)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { Self.describe(result, String(cString: sqlite3_errmsg($0)), $0) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw Self.error(result, "sqlite3_open_v2(\(path)): \(message)")
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, 5000)
    }

    /// Opens the database file at `path` (absolute) to read only the file itself: read-only and
    /// `immutable`, so SQLite takes no lock, reads no WAL and creates no file beside it.
    package init(readingFileOnly path: String) throws(StoreError) {
        var uri = "file:"
        for character in path.unicodeScalars {
            switch character {
            case "%": uri += "%25"
            case "?": uri += "%3F"
            case "#": uri += "%23"
            default: uri.unicodeScalars.append(character)
            }
        }
        uri += "?immutable=1"
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw Self.error(result, "sqlite3_open_v2(\(path), immutable): \(message)")
        }
        self.handle = handle
    }

    deinit {
        close()
    }

    package func close() {
        for statement in statements.values { statement.finalize() }
        statements = [:]
        staticStatements = [:]
        begin = nil
        commit = nil
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs SQL that returns no rows (`sqlite3_exec`).
    package func execute(_ sql: String) throws(StoreError) {
        guard let handle else { throw StoreError(message: "the SQLite store is closed") }
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        guard result == SQLITE_OK else {
            let text = Self.describe(result, message.map { String(cString: $0) } ?? "unknown error", handle)
            sqlite3_free(message)
            throw Self.error(result, "sqlite3_exec: \(text)")
        }
    }

    /// A prepared statement for `sql`, cached for the life of the connection (`sqlite3_prepare_v3`).
    package func statement(_ sql: String) throws(StoreError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        guard let handle else { throw StoreError(message: "the SQLite store is closed") }
        var pointer: OpaquePointer?
        let prepared = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &pointer, nil)
        guard prepared == SQLITE_OK, let pointer else {
            // Preparing reads the schema: another process's lock on the file (busy) shows here first.
            throw Self.error(prepared, "sqlite3_prepare_v3: \(lastError)")
        }
        let statement = Statement(pointer, connection: self)
        statements[sql] = statement
        return statement
    }

    /// ``statement(_:)`` for SQL written into navd, found by its text's address, not its text.
    package func statement(static sql: StaticString) throws(StoreError) -> Statement {
        // A one-scalar literal has no address (and is no SQL statement).
        guard sql.hasPointerRepresentation else { return try statement(sql.description) }
        let key = UInt(bitPattern: sql.utf8Start)
        if let cached = staticStatements[key] {
            cached.reset()
            return cached
        }
        let statement = try self.statement(sql.description)
        staticStatements[key] = statement
        return statement
    }

    /// A failed call's error: `unavailable` when the disk is full or failing (SQLite rolled back,
    /// so nothing was written, and a retry may succeed once there is room), `inUse` when another
    /// process holds the file (busy: nothing is wrong with it), `failure` otherwise.
    package static func error(_ result: Int32, _ message: String) -> StoreError {
        switch result & 0xFF {
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY:
            StoreError(message: message, kind: .unavailable)
        case SQLITE_BUSY, SQLITE_LOCKED:
            StoreError(message: message, kind: .inUse)
        default:
            StoreError(message: message)
        }
    }

    /// SQLite's message for a failed call, with the system's reason (`strerror` of the last
    /// failed system call) when the file system is why: "disk I/O error" alone names no cause.
    static func describe(_ result: Int32, _ message: String, _ handle: OpaquePointer?) -> String {
        switch result & 0xFF {
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY:
            // SQLite clears the errno of a write the disk had no room for: full means ENOSPC.
            let recorded = handle.map { sqlite3_system_errno($0) } ?? 0
            let code = recorded == 0 && result & 0xFF == SQLITE_FULL ? ENOSPC : recorded
            return code != 0 ? "\(message) (\(FileSystem.reason(code)))" : message
        default:
            return message
        }
    }

    var lastError: String {
        guard let handle else { return "closed" }
        return Self.describe(sqlite3_errcode(handle), String(cString: sqlite3_errmsg(handle)), handle)
    }

    package var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// The statement kept in `slot`, prepared on first use and rewound (not cleared) after.
    func prepared(_ slot: inout Statement?, _ sql: String) throws(StoreError) -> Statement {
        if let statement = slot {
            statement.rewind()
            return statement
        }
        let statement = try self.statement(sql)
        slot = statement
        return statement
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try prepared(&begin, "BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            try prepared(&commit, "COMMIT").run()
            return result
        } catch {
            try? statement("ROLLBACK").run()
            throw error
        }
    }

    /// A prepared statement (`sqlite3_stmt *`); parameters are 1-based, columns 0-based.
    package final class Statement {
        private var pointer: OpaquePointer?
        private unowned let connection: SQLiteConnection

        fileprivate init(_ pointer: OpaquePointer, connection: SQLiteConnection) {
            self.pointer = pointer
            self.connection = connection
        }

        fileprivate func finalize() {
            sqlite3_finalize(pointer)
            pointer = nil
        }

        /// Ends the current run, keeping the bindings (for a statement whose every parameter is bound anew).
        package func rewind() {
            sqlite3_reset(pointer)
        }

        /// Ends the current run of the statement, so it holds no lock (a pending read blocks DDL).
        package func reset() {
            sqlite3_reset(pointer)
            sqlite3_clear_bindings(pointer)
        }

        /// Binds `text` by its UTF-8 length, never as a C string: a NUL inside it is kept, not an end.
        @discardableResult
        package func bind(_ index: Int32, _ text: String) throws(StoreError) -> Statement {
            try checkedText(text.withUTF8Bytes { bindText(index, $0, lending: false) })
        }

        /// Binds UTF-8 bytes (JSON written by navd) as text, without making a `String` first.
        @discardableResult
        package func bind(_ index: Int32, utf8 bytes: [UInt8]) throws(StoreError) -> Statement {
            try checkedText(bytes.withUnsafeBufferPointer { bindText(index, $0, lending: false) })
        }

        /// Binds text SQLite reads in place, without copying it: only for a statement run before
        /// `bytes` goes away (inside the closure that lent it), and reset before it runs again.
        @discardableResult
        package func bind(_ index: Int32, lending bytes: UnsafeBufferPointer<UInt8>) throws(StoreError) -> Statement {
            try checkedText(bindText(index, bytes, lending: true))
        }

        /// `sqlite3_bind_text` of UTF-8 bytes by their length, copied (`SQLITE_TRANSIENT`) or lent
        /// (`SQLITE_STATIC`); nil, and nothing bound, for more bytes than SQLite takes.
        private func bindText(_ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>, lending: Bool) -> Int32? {
            guard bytes.count <= Int(Int32.max) else { return nil }
            return bytes.withMemoryRebound(to: CChar.self) { text in
                lending
                    ? navd_sqlite3_bind_text_static(pointer, index, text.baseAddress, Int32(text.count))
                    : navd_sqlite3_bind_text_transient(pointer, index, text.baseAddress, Int32(text.count))
            }
        }

        /// This statement, once ``bindText(_:_:lending:)`` bound its text; the error otherwise.
        private func checkedText(_ result: Int32?) throws(StoreError) -> Statement {
            guard let result else { throw StoreError(message: "sqlite3_bind_text: text too long") }
            guard result == SQLITE_OK else { throw StoreError(message: "sqlite3_bind_text: \(connection.lastError)") }
            return self
        }

        @discardableResult
        package func bind(_ index: Int32, _ number: Int64) throws(StoreError) -> Statement {
            guard sqlite3_bind_int64(pointer, index, number) == SQLITE_OK else {
                throw StoreError(message: "sqlite3_bind_int64: \(connection.lastError)")
            }
            return self
        }

        @discardableResult
        package func bind(_ index: Int32, _ bytes: [UInt8]) throws(StoreError) -> Statement {
            let result = bytes.withUnsafeBytes { navd_sqlite3_bind_blob_transient(pointer, index, $0.baseAddress, Int32($0.count)) }
            guard result == SQLITE_OK else { throw StoreError(message: "sqlite3_bind_blob: \(connection.lastError)") }
            return self
        }

        /// Advances to the next row (`sqlite3_step`). - Returns: false when there are no more rows.
        package func step() throws(StoreError) -> Bool {
            switch sqlite3_step(pointer) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            case let result: throw SQLiteConnection.error(result, "sqlite3_step: \(connection.lastError)")
            }
        }

        /// Runs a statement that returns no rows.
        package func run() throws(StoreError) {
            _ = try step()
        }

        /// Runs the statement to its end, adding up its rows' first column (a `DELETE … RETURNING`
        /// of what each deleted row took), and ends the run.
        package func sum() throws(StoreError) -> Int {
            defer { reset() }
            var total = 0
            while try step() { total += Int(sqlite3_column_int64(pointer, 0)) }
            return total
        }

        /// The column's text bytes, in place (valid only inside `body`, until the next step).
        package func withBytes<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            guard let text = sqlite3_column_text(pointer, column) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            return body(UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(pointer, column))))
        }

        package func isNull(_ column: Int32) -> Bool {
            sqlite3_column_type(pointer, column) == SQLITE_NULL
        }

        package func int(_ column: Int32) -> Int64 {
            sqlite3_column_int64(pointer, column)
        }

        /// The column's text by its length (`sqlite3_column_bytes`), not up to a first NUL.
        package func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(pointer, column) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(pointer, column))), as: UTF8.self)
        }

        /// The column's bytes, for JSON text parsed without an intermediate `String`.
        package func bytes(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(pointer, column))
            guard count > 0, let base = sqlite3_column_blob(pointer, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: base, count: count))
        }
    }
}
