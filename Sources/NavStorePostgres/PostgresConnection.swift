import CLibPQ
import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection (`PGconn *`), owned by this object and finished in `close()`/`deinit`.
///
/// `@unchecked Sendable` so the pool can pass it between threads: ``PostgresPool`` hands it to
/// one thread at a time and takes it back before anyone else may use it.
package final class PostgresConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var prepared: [String: String] = [:]
    private let conninfo: String

    /// Connects (`PQconnectdb`); `conninfo` may be a `postgres://` URI.
    package init(conninfo: String) throws(StoreError) {
        self.conninfo = conninfo
        try connect()
    }

    deinit {
        close()
    }

    /// How long a connection attempt may take (libpq `connect_timeout`) unless the URL says:
    /// a server that does not answer must not hold a request longer than this.
    static let connectTimeout = "5"

    private func connect() throws(StoreError) {
        // `dbname` is expanded from the URL after `connect_timeout`, so a timeout the URL names wins.
        let keywords: [UnsafeMutablePointer<CChar>?] = ["connect_timeout", "dbname"].map { (text: String) in strdup(text) }
        let values: [UnsafeMutablePointer<CChar>?] = [Self.connectTimeout, conninfo].map { (text: String) in strdup(text) }
        defer { for pointer in keywords + values { free(pointer) } }
        let handle = PQconnectdbParams(
            keywords.map { $0.map { UnsafePointer($0) } } + [nil], values.map { $0.map { UnsafePointer($0) } } + [nil], 1)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            let message = handle.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(handle)
            // A server that is down, restarting or refusing connections: retry later.
            throw StoreError(message: "PQconnectdbParams: \(message.trimmingNewlines())", kind: .unavailable)
        }
        self.handle = handle
        prepared = [:]
        _ = try? execute("SET client_min_messages = warning")
    }

    package func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection is still usable; a broken one is reconnected on next use.
    var isHealthy: Bool {
        handle.map { PQstatus($0) == CONNECTION_OK } ?? false
    }

    /// Whether the server has closed this idle connection (it was stopped or restarted, or
    /// ended the backend): its socket is at end of file, or holds the server's farewell. libpq
    /// only notices on the next statement, which would then fail although a new connection
    /// would succeed; one non-blocking `recv` with `MSG_PEEK` finds out first.
    private var wasClosedByServer: Bool {
        guard let handle else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return true }
        var byte: UInt8 = 0
        let received = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        // Nothing to read (EAGAIN) is the healthy case: an idle connection is sent nothing.
        return received >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// A failed statement's error: `unavailable` when the connection broke or the server is
    /// shutting down, starting up or out of connections (SQLSTATE 08…, 57P01–57P03, 53300).
    private func failure(_ message: String, _ result: OpaquePointer?) -> StoreError {
        let field = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }
        let state = field.map { String(cString: $0) } ?? ""
        let unavailable = !isHealthy || state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state)
        return StoreError(message: message, kind: unavailable ? .unavailable : .failure)
    }

    /// Waits up to `milliseconds` for notifications (`LISTEN`) and returns their payloads.
    /// - Throws: when the connection broke.
    func notifications(waitingUpTo milliseconds: Int32) throws(StoreError) -> [String] {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw StoreError(message: "the notification connection is closed", kind: .unavailable)
        }
        var payloads = Self.pending(handle)
        guard payloads.isEmpty else { return payloads }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { throw StoreError(message: "the notification connection has no socket", kind: .unavailable) }
        let ready = poll(&descriptor, 1, milliseconds)
        guard ready > 0 else { return [] }
        guard PQconsumeInput(handle) == 1 else {
            throw StoreError(message: "PQconsumeInput: \(String(cString: PQerrorMessage(handle)).trimmingNewlines())", kind: .unavailable)
        }
        payloads = Self.pending(handle)
        return payloads
    }

    /// The notifications libpq has read already.
    private static func pending(_ handle: OpaquePointer) -> [String] {
        var payloads: [String] = []
        while let notice = PQnotifies(handle) {
            payloads.append(String(cString: notice.pointee.extra))
            PQfreemem(notice)
        }
        return payloads
    }

    /// Runs `sql` with text parameters (`PQexecParams`, or `PQexecPrepared` once it has been
    /// prepared on this connection) and returns its rows as text.
    /// - Parameter reconnecting: whether a connection found broken is replaced first. Not inside
    ///   a transaction: the statement would run outside it, and a `COMMIT` would seem to succeed.
    @discardableResult
    package func execute(_ sql: String, _ parameters: [String?] = [], prepare: Bool = false, reconnecting: Bool = true) throws(StoreError)
        -> PostgresResult
    {
        if reconnecting, !isHealthy || wasClosedByServer {
            close()
            try connect()
        }
        guard let handle else { throw StoreError(message: "the PostgreSQL store is closed") }
        // libpq reads text-format parameters as C strings (it ignores `paramLengths` for them), so a
        // NUL would silently end a value early: refuse it (PostgreSQL text cannot hold one anyway).
        for parameter in parameters where parameter.map(Self.containsNUL) == true {
            throw StoreError(message: "PostgreSQL: a text parameter contains a NUL byte")
        }
        let name = prepare ? try preparedName(sql, parameterCount: parameters.count, handle) : nil
        let result = Self.withCStrings(parameters) { pointers in
            if let name {
                return PQexecPrepared(handle, name, Int32(pointers.count), pointers, nil, nil, 0)
            }
            return PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        }
        guard let result else { throw failure("PQexec: \(String(cString: PQerrorMessage(handle)).trimmingNewlines())", nil) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let error = failure("PostgreSQL: \(String(cString: PQresultErrorMessage(result)).trimmingNewlines())", result)
            PQclear(result)
            throw error
        }
        return PostgresResult(result)
    }

    /// The name of `sql` prepared on this connection (`PQprepare` the first time).
    private func preparedName(_ sql: String, parameterCount: Int, _ handle: OpaquePointer) throws(StoreError) -> String {
        if let existing = prepared[sql] { return existing }
        let fresh = "navd_\(prepared.count)"
        let result = PQprepare(handle, fresh, sql, Int32(parameterCount), nil)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw failure("PQprepare: \(String(cString: PQresultErrorMessage(result)).trimmingNewlines())", result)
        }
        prepared[sql] = fresh
        return fresh
    }

    /// One statement of a pipeline: its result, or the error it (or an earlier one) ended in.
    package enum PipelineResult {
        case rows(PostgresResult)
        case failed(StoreError)
    }

    /// Sends every statement (prepared) in libpq's pipeline mode (`PQenterPipelineMode`,
    /// `PQsendQueryPrepared` each, one `PQpipelineSync`) and reads their results: one round trip.
    /// Without `BEGIN` the statements form one implicit transaction that the sync commits, so
    /// either all of them commit or none does; a failed statement makes the ones after it
    /// `failed` too (PostgreSQL skips them) and rolls back those before it.
    /// - Throws: when the connection breaks (then whether the transaction committed is unknown:
    ///   the caller reads back what it wrote).
    /// - Parameter sent: set once the first statement has been handed to libpq: a failure after
    ///   that may have committed.
    package func pipeline(_ statements: [(sql: String, parameters: [String?])], sent: inout Bool) throws(StoreError) -> [PipelineResult] {
        if !isHealthy || wasClosedByServer {
            close()
            try connect()
        }
        guard let handle else { throw StoreError(message: "the PostgreSQL store is closed") }
        var names: [String] = []
        for statement in statements {
            for parameter in statement.parameters where parameter.map(Self.containsNUL) == true {
                throw StoreError(message: "PostgreSQL: a text parameter contains a NUL byte")
            }
            names.append(try preparedName(statement.sql, parameterCount: statement.parameters.count, handle))
        }
        guard PQenterPipelineMode(handle) == 1 else { throw failure("PQenterPipelineMode: \(lastError(handle))", nil) }
        sent = true
        for (name, statement) in zip(names, statements) {
            let sent = Self.withCStrings(statement.parameters) { pointers in
                PQsendQueryPrepared(handle, name, Int32(pointers.count), pointers, nil, nil, 0)
            }
            guard sent == 1 else { throw brokenPipeline("PQsendQueryPrepared", handle) }
        }
        guard PQpipelineSync(handle) == 1 else { throw brokenPipeline("PQpipelineSync", handle) }
        var results: [PipelineResult] = []
        var firstError: StoreError?
        for _ in statements {
            // Each statement's result, then a NULL that ends it.
            guard let result = PQgetResult(handle) else { throw brokenPipeline("PQgetResult", handle) }
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                results.append(.rows(PostgresResult(result)))
            } else {
                let error =
                    status == PGRES_PIPELINE_ABORTED
                    ? (firstError ?? StoreError(message: "PostgreSQL: skipped after an earlier statement failed"))
                    : failure("PostgreSQL: \(String(cString: PQresultErrorMessage(result)).trimmingNewlines())", result)
                PQclear(result)
                firstError = firstError ?? error
                results.append(.failed(error))
            }
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        // The sync's own result: the implicit transaction has ended (committed or rolled back).
        guard let sync = PQgetResult(handle) else { throw brokenPipeline("PQgetResult", handle) }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        let commitError = synced ? nil : failure("PostgreSQL: \(String(cString: PQresultErrorMessage(sync)).trimmingNewlines())", sync)
        PQclear(sync)
        if !synced {
            // The commit itself failed: nothing of the pipeline holds. Drain to the sync.
            for _ in 0..<4 {
                guard let extra = PQgetResult(handle) else { continue }
                let done = PQresultStatus(extra) == PGRES_PIPELINE_SYNC
                PQclear(extra)
                if done { break }
            }
        }
        guard PQexitPipelineMode(handle) == 1 else { throw brokenPipeline("PQexitPipelineMode", handle) }
        if let commitError { throw commitError }
        return results
    }

    /// A pipeline that cannot go on: the connection is closed (reconnected on next use), and the
    /// error is `unavailable` when it broke.
    private func brokenPipeline(_ call: String, _ handle: OpaquePointer) -> StoreError {
        let error = failure("\(call): \(lastError(handle))", nil)
        close()
        return StoreError(message: error.message, kind: .unavailable)
    }

    private func lastError(_ handle: OpaquePointer) -> String {
        String(cString: PQerrorMessage(handle)).trimmingNewlines()
    }

    /// Runs several statements without parameters (`PQexec`), for migrations.
    func executeScript(_ sql: String) throws(StoreError) {
        guard let handle else { throw StoreError(message: "the PostgreSQL store is closed") }
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw StoreError(message: "PostgreSQL: \(String(cString: PQresultErrorMessage(result)).trimmingNewlines())")
        }
    }

    /// Whether `text` holds a NUL byte (`memchr` over its UTF-8: parameters are kilobytes of JSON).
    static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false }
    }

    private static func withCStrings<T>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let owned: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in owned { free(pointer) } }
        return body(owned.map { $0.map { UnsafePointer($0) } })
    }
}

/// The rows of a query (`PGresult *`), cleared when this object goes away.
package final class PostgresResult {
    private let result: OpaquePointer

    fileprivate init(_ result: OpaquePointer) {
        self.result = result
    }

    deinit {
        PQclear(result)
    }

    var rowCount: Int { Int(PQntuples(result)) }

    /// Rows touched by an INSERT/UPDATE/DELETE (`PQcmdTuples`).
    var affectedRows: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// The value as text; empty for SQL NULL and for a row or column the result does not have
    /// (libpq answers NULL there, which must never reach `String(cString:)`).
    package func text(_ row: Int, _ column: Int) -> String {
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return "" }
        return String(cString: value)
    }

    package func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return [] }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        return value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    package func int(_ row: Int, _ column: Int) -> Int64 {
        Int64(text(row, column)) ?? 0
    }

    /// The value's bytes in place (valid only inside `body`), without a copy.
    func withBytes<R>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: value, count: Int(PQgetlength(result, Int32(row), Int32(column)))))
    }
}

extension String {
    /// libpq's message on one line: its lines (`DETAIL:`, `HINT:`, the tab-indented `Is the server
    /// running…`) joined with `; `, so a log record or an error answer never spans lines.
    fileprivate func trimmingNewlines() -> String {
        split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { line in line.drop { $0 == " " || $0 == "\t" } }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }
}
