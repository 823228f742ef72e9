import Foundation
import NavCore
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStorePostgres
@testable import NavStoreSQLite
@testable import NavTestSupport

/// A session is reached by exactly its own id (32 lowercase hex digits) and by nothing else:
/// not `{id}%00…` (which SQLite, bound as a C string, read as `{id}` while the store's cache
/// kept it as another session), not uppercase, not a prefix. Each answers as a session that
/// does not exist, and leaves nothing behind.
@Suite(.serialized) struct SessionIDTests {
    /// The forms of `id` that are not `id`.
    static func impostors(of id: String) -> [String] {
        [id + "%00", id + "%00anything", id.uppercased(), String(id.dropLast()), id + "0", "%00" + id, id + "%0A"]
    }

    /// The review's reproduction, on SQLite: navigations alternating `{id}` and `{id}%00` came
    /// back as versions 2, 2, 3, 3, and after a restart the event log had duplicated `seq`s.
    /// On the binary: a restart is a new process.
    @Test func anIdWithANULSuffixIsNotTheSession() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        var navd = try DaemonHarness(store: store)
        let session = try navd.createSession()
        // What a session that does not exist answers (whatever the auth rules make that).
        let absent = try navd.send("GET", "/v1/sessions/\(SessionService.newID())", token: session.token)
        #expect(absent.status >= 400 && absent.status < 500)

        var versions: [Int] = []
        for (index, path) in ["list_news", "list_news", "show_news(id=1)", "show_news(id=2)"].enumerated() {
            let id = index % 2 == 0 ? session.id : session.id + "%00"
            let answer = try navd.send("POST", "/v1/sessions/\(id)/navigate", json: ["path": .string(path)], token: session.token)
            if index % 2 == 0 {
                #expect(answer.status == 200, "\(answer)")
                versions.append(try answer.json()["version"]?.int ?? -1)
            } else {
                #expect(answer.status == absent.status, "\(answer)")
                #expect(answer.code == absent.code)
            }
        }
        #expect(versions == [2, 3])
        for impostor in Self.impostors(of: session.id) {
            for (method, suffix) in [("GET", ""), ("GET", "/events"), ("DELETE", ""), ("POST", "/exit")] {
                let answer = try navd.send(method, "/v1/sessions/\(impostor)\(suffix)", token: session.token)
                #expect(answer.status == absent.status, "\(method) \(impostor)\(suffix): \(answer)")
                #expect(answer.code == absent.code, "\(method) \(impostor)\(suffix)")
            }
        }
        #expect(try navd.view(session)["version"]?.int == 3)

        #expect(try navd.stop() == 0)
        navd = try DaemonHarness(store: store)
        let events = try navd.events(session, limit: 1000).json()["events"]?.array ?? []
        let seqs = events.compactMap { $0["seq"]?.int }
        #expect(!seqs.isEmpty)
        #expect(seqs == Array(Set(seqs)).sorted(), "event seqs must be unique and in order: \(seqs)")
        #expect(try navd.view(session)["version"]?.int == 3)
        #expect(try navd.stop() == 0)
    }

    /// A raw NUL in the request line never reaches a route: the review's
    /// `DELETE /v1/sessions/{id}\0/screens/e1/state` deleted the session. On the binary: the
    /// refusal is the HTTP server's, which reads the request line off the socket.
    @Test func aRawNULInTheTargetDeletesNothing() throws {
        let navd = try DaemonHarness(store: "memory")
        let session = try navd.createSession()
        let request =
            "DELETE /v1/sessions/\(session.id)\0/screens/e1/state HTTP/1.1\r\nHost: x\r\n"
            + "Authorization: Bearer \(session.token)\r\nConnection: close\r\n\r\n"
        let answer = try navd.raw(Array(request.utf8), method: "DELETE", target: "/v1/sessions/\(session.id)", validate: false)
        #expect(answer.status == 400)
        #expect(answer.code == "malformed_request")
        #expect(answer.headers["content-type"] == "application/problem+json")
        #expect(try navd.get(session).status == 200)
        #expect(try navd.stop() == 0)
    }

    /// The stores themselves refuse every other form: it never reaches SQLite or a cache entry.
    @Test func storesFindOnlyTheExactId() throws {
        let folder = try TemporaryFolder()
        let graphs = try TestFixtures.graphs()
        let stores: [any SessionStore] = [
            MemoryStore(), try SQLiteStore(path: "\(folder.path)/navd.db", decode: StoreFactory.snapshotDecoder(graphs))
        ]
        for store in stores {
            let id = SessionService.newID()
            let (session, events) = try TestFixtures.session(id, in: graphs)
            try store.insert(session, events: events)
            for impostor in [id + "\0", id + "\0anything", id.uppercased(), String(id.dropLast()), "", "é"] {
                #expect(try store.load(impostor) == nil, "\(store.name) \(impostor)")
                #expect(try store.events(of: impostor, after: 0, limit: 10).isEmpty)
                #expect(try !store.delete(impostor))
                var other = session
                other.id = impostor
                #expect(throws: StoreError.self) { try store.insert(other, events: []) }
                #expect(throws: StoreError.self) {
                    _ = try store.update(other, expectedVersion: 1, events: [], eventsJSON: Array("[]".utf8))
                }
            }
            #expect(try store.count() == 1)
            #expect(try store.load(id)?.id == id)
            store.close()
        }
    }

    /// Text is bound to SQLite by its length, never as a C string: a NUL inside it is kept.
    @Test func sqliteBindsTextByItsLength() throws {
        let folder = try TemporaryFolder()
        let connection = try SQLiteConnection(path: "\(folder.path)/bind.db")
        defer { connection.close() }
        try connection.execute("CREATE TABLE t (value TEXT)")
        for text in ["a\0b", "\0", "", "é\0\u{1}x"] {
            try connection.execute("DELETE FROM t")
            try connection.statement("INSERT INTO t (value) VALUES (?)").bind(1, text).run()
            let read = try connection.statement("SELECT value, length(CAST(value AS BLOB)) FROM t")
            #expect(try read.step())
            #expect(read.text(0) == text)
            #expect(read.int(1) == Int64(text.utf8.count))
            read.reset()
            let matched = try connection.statement("SELECT count(*) FROM t WHERE value = ?").bind(1, String(text.prefix { $0 != "\0" }))
            #expect(try matched.step())
            #expect(matched.int(0) == (text.contains("\0") ? 0 : 1), "\(text.debugDescription)")
            matched.reset()
        }
    }

    /// An Idempotency-Key is part of a cache key: only printable ASCII is accepted, and a key
    /// that is refused changes nothing.
    @Test func idempotencyKeysArePrintableASCII() throws {
        let navd = try startNavd(store: "memory")
        let session = try navd.createSession()
        for key in ["k\u{1}", "k\u{7F}", "clé", "k\u{1B}[31m", String(repeating: "k", count: 201)] {
            let answer = try navd.send(
                "POST", session.url + "/navigate", json: ["path": "list_news"], token: session.token, headers: ["Idempotency-Key": key])
            #expect(answer.status == 400, "\(key.debugDescription): \(answer)")
            #expect(answer.code == "invalid_request")
        }
        #expect(try navd.view(session)["version"]?.int == 1)
        let key = "a key-1_2.3:4/5"
        let first = try navd.send(
            "POST", session.url + "/navigate", json: ["path": "list_news"], token: session.token, headers: ["Idempotency-Key": key])
        let again = try navd.send(
            "POST", session.url + "/navigate", json: ["path": "list_news"], token: session.token, headers: ["Idempotency-Key": key])
        #expect(first.status == 200)
        #expect(again.headers["idempotent-replayed"] == "true")
        // Blanks around a field's value are not part of it (RFC 9110 §5.5): the same key.
        let padded = try navd.send(
            "POST", session.url + "/navigate", json: ["path": "list_news"], token: session.token, headers: ["Idempotency-Key": key + "  \t"]
        )
        #expect(padded.headers["idempotent-replayed"] == "true", "\(padded)")
        #expect(try navd.view(session)["version"]?.int == 2)
        #expect(try navd.stop() == 0)
    }

    /// A key sent twice is refused, not joined into a third (`a, b`) that neither retry would
    /// name: a create or a change with two keys answers 400 and changes nothing.
    @Test func anIdempotencyKeySentTwiceIsRefused() throws {
        let navd = try startNavd(store: "memory")
        let session = try navd.createSession()
        let body = Array(#"{"path":"list_news"}"#.utf8)
        let twice: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), ("Authorization", "Bearer \(session.token)"),
            ("Idempotency-Key", "a"), ("Idempotency-Key", "b")
        ]
        for target in [session.url + "/navigate", "/v1/sessions"] {
            let answer = try navd.exchange("POST", target, fields: twice, body: target == "/v1/sessions" ? Array("{}".utf8) : body)
            #expect(answer.status == 400, "\(target): \(answer)")
            #expect(answer.code == "invalid_request")
            #expect((try? answer.json())?["param"]?.string == "Idempotency-Key")
        }
        #expect(try navd.view(session)["version"]?.int == 1)
        #expect(try navd.send("GET", "/metrics").text.contains("\nnavd_sessions 1\n"))
        // One key, and its retry: applied once, as ever.
        let once = twice.filter { $0.value != "b" }
        #expect(try navd.exchange("POST", session.url + "/navigate", fields: once, body: body).status == 200)
        #expect(try navd.exchange("POST", session.url + "/navigate", fields: once, body: body).headers["idempotent-replayed"] == "true")
        #expect(try navd.view(session)["version"]?.int == 2)
        #expect(try navd.stop() == 0)
    }

    /// On PostgreSQL too: libpq reads text parameters as C strings, so one holding a NUL is
    /// refused, never cut short; and the store answers other id forms as no session.
    @Test(.needsPostgres) func postgresRefusesNULParametersAndOtherIdForms() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let connection = try PostgresConnection(conninfo: cluster.url)
        #expect(throws: StoreError.self) { try connection.execute("SELECT $1::text", ["a\0b"]) }
        #expect(throws: StoreError.self) { try connection.execute("SELECT $1::text", ["a\0b"], prepare: true) }
        #expect(try connection.execute("SELECT $1::text", ["ab"]).text(0, 0) == "ab")
        // A row or column the result does not have reads as nothing, never as a crash.
        let empty = try connection.execute("SELECT 1 WHERE false")
        #expect(empty.text(0, 0) == "" && empty.int(0, 0) == 0 && empty.bytes(0, 0).isEmpty)
        #expect(try connection.execute("SELECT 7").text(0, 3) == "")
        connection.close()

        let navd = try startNavd(store: cluster.url)
        let session = try navd.createSession()
        let absent = try navd.send("GET", "/v1/sessions/\(SessionService.newID())", token: session.token)
        for impostor in Self.impostors(of: session.id) {
            let answer = try navd.send("POST", "/v1/sessions/\(impostor)/navigate", json: ["path": "list_news"], token: session.token)
            #expect(answer.status == absent.status, "\(impostor): \(answer)")
            #expect(answer.code == absent.code)
        }
        #expect(try navd.view(session)["version"]?.int == 1)
        #expect(try navd.stop() == 0)
    }
}
