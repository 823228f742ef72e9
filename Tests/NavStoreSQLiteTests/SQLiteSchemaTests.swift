import Foundation
import NavCore
import NavJSON
import NavSessions
import Testing

@testable import NavStoreSQLite
@testable import NavTestSupport

/// The SQLite store's schema: one current shape, created in one step; one upgrade, from the shape
/// navd wrote before schema version 5 (the same tables, recorded as migrations 1…4); every other
/// shape refused with what was found, and the file left byte for byte as it was.
@Suite struct SQLiteSchemaTests {
    typealias Fixture = SQLiteStoreTests.Fixture

    /// The fixture for databases navd wrote before schema version 5: its `migrate(_:through:)` (main
    /// at a852e4e) created this table, then ran the migrations below in order, each in a
    /// transaction that also recorded its number. Copied verbatim from that navd's SQLiteStore.swift.
    static let oldMigrationsTable = "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"
    static let oldMigrations: [String] = [
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            graph TEXT NOT NULL,
            graph_version INTEGER NOT NULL,
            version INTEGER NOT NULL,
            token_hash BLOB NOT NULL,
            snapshot_schema INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            touched_at INTEGER NOT NULL
        );
        CREATE INDEX sessions_touched_at ON sessions (touched_at);
        CREATE TABLE events (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID;
        CREATE TABLE graphs (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            document TEXT NOT NULL,
            PRIMARY KEY (name, version)
        );
        """,
        // One row per transition instead of one per event: a write inserts one row, not ten.
        """
        CREATE TABLE event_batches (
            session_id TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, first_seq)
        ) WITHOUT ROWID;
        INSERT INTO event_batches (session_id, first_seq, last_seq, body)
            SELECT session_id, seq, seq, '[' || body || ']' FROM events;
        DROP TABLE events;
        """,
        // Changes are appended here and folded into sessions and the event batches by compaction.
        """
        CREATE TABLE journal (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            touched_at INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            events TEXT NOT NULL
        );
        -- Compaction writes a session's journalled events as one batch of several kilobytes: in
        -- a table clustered by session (WITHOUT ROWID) such rows split pages wherever they land;
        -- in a rowid table they are appended, and only a small index entry lands by session.
        CREATE TABLE event_log (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            body TEXT NOT NULL
        );
        CREATE INDEX event_log_session ON event_log (session_id, first_seq);
        INSERT INTO event_log (session_id, first_seq, last_seq, body)
            SELECT session_id, first_seq, last_seq, body FROM event_batches ORDER BY session_id, first_seq;
        DROP TABLE event_batches;
        """,
        // Changes go to the change log files now; the journal table is folded in before this runs.
        """
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO store_meta (key, value) VALUES ('compacted_seq', 0);
        DROP TABLE journal;
        """
    ]

    /// A database as navd before schema version 5 left it after running its first `count`
    /// migrations (4: every file it created; 1…3: development builds only), in WAL mode as navd had it.
    static func makeOldDatabase(at path: String, through count: Int) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute(oldMigrationsTable)
        for (index, sql) in oldMigrations.prefix(count).enumerated() {
            try connection.execute(
                "BEGIN IMMEDIATE;\n\(sql)\nINSERT INTO migrations (version, applied_at) VALUES (\(index + 1), strftime('%s','now'));\nCOMMIT;"
            )
        }
    }

    /// Runs `sql` on the database at `path` with the database at `other` attached as `other`.
    static func run(_ sql: String, on path: String, attaching other: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.statement("ATTACH DATABASE ? AS other").bind(1, other).run()
        try connection.execute(sql)
        try connection.execute("DETACH DATABASE other")
    }

    /// Copies every session, event batch and graph, and the compacted seq, from a database of the
    /// current schema at `other` into one of navd's previous schema at `path`.
    static func copyRows(from other: String, into path: String) throws {
        try run(
            """
            INSERT INTO sessions (id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at)
                SELECT id, graph, graph_version, version, token_hash, snapshot_schema, snapshot, created_at, touched_at FROM other.sessions;
            INSERT INTO event_log (seq, session_id, first_seq, last_seq, body) SELECT seq, session_id, first_seq, last_seq, body FROM other.event_log;
            INSERT INTO graphs (name, version, document) SELECT name, version, document FROM other.graphs ORDER BY rowid;
            UPDATE store_meta SET value = (SELECT value FROM other.store_meta WHERE key = 'compacted_seq') WHERE key = 'compacted_seq';
            """,
            on: path, attaching: other
        )
    }

    /// Every row of `table`, each as its columns' SQL literals (`quote()`), sorted.
    /// The `migrations` rows, in the order of their versions (``rows(_:at:)`` orders rows as text).
    static func migrations(at path: String) throws -> [String] {
        func version(_ row: String) -> Int { Int(row.prefix { $0 != "|" }) ?? 0 }
        return try rows("migrations", at: path).sorted { version($0) < version($1) }
    }

    /// How many rows `table` holds, read on the store's own reading connection (the file is
    /// the store's alone while it is open).
    static func rowCount(_ table: String, of store: SQLiteStore) throws -> Int {
        try store.withReader { reader throws(StoreError) -> Int in
            let statement = try reader.statement("SELECT COUNT(*) FROM \(table)")
            defer { statement.reset() }
            _ = try statement.step()
            return Int(statement.int(0))
        }
    }

    static func rows(_ table: String, at path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let columns = try connection.statement("SELECT name FROM pragma_table_info(?) ORDER BY cid").bind(1, table)
        var names: [String] = []
        while try columns.step() { names.append(columns.text(0)) }
        columns.reset()
        let select = try connection.statement(
            "SELECT \(names.map { "quote(\($0))" }.joined(separator: " || '|' || ")) FROM \(table) ORDER BY 1")
        defer { select.reset() }
        var rows: [String] = []
        while try select.step() { rows.append(select.text(0)) }
        return rows
    }

    /// The objects in `sqlite_master` as "type name", by name.
    static func objects(at path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let statement = try connection.statement(
            "SELECT type || ' ' || name FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_' ORDER BY name")
        defer { statement.reset() }
        var objects: [String] = []
        while try statement.step() { objects.append(statement.text(0)) }
        return objects
    }

    static func newsDocument() throws -> JSONValue {
        try JSONValue(parsing: Array(try Data(contentsOf: DaemonHarness.packageRoot.appendingPathComponent("Examples/news.json"))))
    }

    /// The files in `folder` (the store's lock is on the database file itself: no file of its own).
    static func files(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }
}

extension SQLiteSchemaTests {
    @Test func aNewDatabaseGetsTheCurrentShapeInOneStep() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let fixture = try Fixture(path: path, threshold: 10)
        _ = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        fixture.store.close()

        #expect(
            try Self.objects(at: path) == [
                "table event_log", "index event_log_session", "table feed", "index feed_blocks", "table feed_checkpoints",
                "table graphs",
                "table idempotency",
                "index idempotency_created_at", "index idempotency_session", "table migrations", "table sessions",
                "index sessions_touched_at", "table store_meta"
            ]
        )
        #expect(try Self.migrations(at: path).map { $0.split(separator: "|").first } == ["11"], "one step, version 11")
        // And where the change log lives (docs/design.md, "A store is named by what it is").
        let meta = try Self.rows("store_meta", at: path)
        #expect(meta.count == 4 && meta[0] == "'compacted_seq'|0", "\(meta)")
        #expect(meta.contains("'log_prefix'|'\(path)'"), "\(meta)")
        #expect(try Self.rows("sessions", at: path).count == 1)

        // Column for column, key for key, the tables navd's four migrations built before, and versions 6's and 7's.
        let old = "\(folder.path)/old.db"
        try Self.makeOldDatabase(at: old, through: 4)
        let new = try SQLiteConnection(path: path)
        defer { new.close() }
        let built = try SQLiteConnection(path: old)
        defer { built.close() }
        // The schema is read before `journal_mode=WAL` now; a new file still ends up in WAL mode.
        let mode = try new.statement("PRAGMA journal_mode")
        _ = try mode.step()
        #expect(mode.text(0) == "wal")
        mode.reset()
        let objects = try SQLiteStore.schemaObjects(of: new)
        #expect(SQLiteStore.previousObjects(objects) == (try SQLiteStore.schemaObjects(of: built)))
        #expect(objects["idempotency"]?.hasPrefix("table idempotency (key TEXT, session_id TEXT NOT NULL,") == true, "\(objects)")
        #expect(
            objects["sessions"]?.hasPrefix("table sessions (id TEXT, graph TEXT NOT NULL, graph_version INTEGER NOT NULL,") == true,
            "\(objects)")
        #expect(objects["event_log_session"] == "index event_log_session ON event_log (session_id, first_seq)")
        #expect(try SQLiteStore.inspect(path: path).lines.contains("  schema: version 11"))
    }

    /// A file navd wrote before schema version 5 — built here by that navd's own statements, with
    /// sessions, their events and a graph — opens: every row is read back as it was, the versions
    /// 5 and 6 are recorded and the idempotency table added, nothing else in the file changes, and
    /// the sessions take further changes.
    @Test func aDatabaseOfTheSchemaBeforeIsStampedAndServedWithEveryRowAsItWas() throws {
        let folder = try TemporaryFolder()
        let scratch = "\(folder.path)/scratch.db"
        let path = "\(folder.path)/navd.db"
        let document = try Self.newsDocument()
        var expected: [String: (version: Int, path: String, context: [String: JSONValue], events: [LifecycleEvent])] = [:]
        do {
            // Compacting every 4 changes: some events in batches of several transitions.
            let fixture = try Fixture(path: scratch, threshold: 4)
            #expect(try fixture.store.storeGraph(document, name: "news").version == 1)
            for index in 0..<3 {
                let context: [String: JSONValue] = ["user": .string("u\(index)")]
                let created = try fixture.sessions.create(graph: nil, start: nil, context: context)
                var entry = (
                    version: created.session.state.version, path: created.session.state.path.description, context: context,
                    events: created.events
                )
                for step in 0...index * 2 {
                    let mutation = try fixture.navigate(created.session.id, step % 2 == 0 ? SQLiteStoreTests.pathA : SQLiteStoreTests.pathB)
                    entry.version = mutation.session.state.version
                    entry.path = mutation.session.state.path.description
                    entry.events += mutation.events
                }
                expected[created.session.id] = entry
            }
            fixture.store.close()
        }
        try Self.makeOldDatabase(at: path, through: 4)
        try Self.copyRows(from: scratch, into: path)
        let tables = ["sessions", "event_log", "graphs", "store_meta"]
        let before = try tables.map { try Self.rows($0, at: path) }
        #expect(before[0].count == 3 && before[1].count >= 3 && before[2].count == 1, "\(before)")
        let oldVersions = try Self.migrations(at: path)
        #expect(oldVersions.map { $0.split(separator: "|").first } == ["1", "2", "3", "4"])
        let check = try SQLiteStore.inspect(path: path)
        #expect(!check.damaged)
        #expect(
            check.lines.contains {
                $0.hasPrefix(
                    "  schema: version 4 (navd upgrades it to 11 when it next starts: it adds the idempotency, feed and checkpoint tables")
            }, "\(check.lines)")

        do {
            let fixture = try Fixture(path: path, threshold: 4)
            for (id, entry) in expected {
                let session = try #require(try fixture.store.load(id))
                #expect(session.state.version == entry.version)
                #expect(session.state.path.description == entry.path)
                #expect(session.state.context == entry.context)
                #expect(try fixture.allEvents(id) == entry.events)
            }
            #expect(try fixture.store.count() == 3)
            #expect(Set(try fixture.store.list(limit: 10).map(\.id)) == Set(expected.keys))
            #expect(try fixture.store.graph("news", version: 1) == document)
            #expect(try fixture.store.latestGraphVersions().map { "\($0.name) \($0.version)" } == ["news 1"])
            fixture.store.close()
        }
        // Opening changed no row; it only recorded where the change log lives.
        #expect(try tables.map { try Self.rows($0, at: path).filter { !$0.hasPrefix("'log_") } } == before, "opening changed no row")
        #expect(try Self.rows("store_meta", at: path).contains("'log_prefix'|'\(path)'"))
        let versions = try Self.migrations(at: path)
        #expect(Array(versions.prefix(4)) == oldVersions)
        #expect(versions.map { $0.split(separator: "|").first } == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"], "\(versions)")
        #expect(try SQLiteStore.inspect(path: path).lines.contains("  schema: version 11"))

        // And they go on: each takes a change, which survives reopening.
        do {
            let fixture = try Fixture(path: path, threshold: 4)
            for (id, entry) in expected {
                let mutation = try fixture.navigate(id, entry.path == Fixture.canonicalA ? SQLiteStoreTests.pathB : SQLiteStoreTests.pathA)
                #expect(mutation.session.state.version == entry.version + 1)
                expected[id]?.version += 1
                expected[id]?.events += mutation.events
            }
            fixture.store.close()
        }
        let reopened = try Fixture(path: path, threshold: 4)
        for (id, entry) in expected {
            #expect(try reopened.store.load(id)?.state.version == entry.version)
            #expect(try reopened.allEvents(id) == entry.events)
        }
        reopened.store.close()
        #expect(try Self.migrations(at: path).count == 11, "upgraded once")
    }

    /// A file of schema version 5 (the tables before the idempotency table) gets that table and the
    /// feed table, and versions 6 and 7, nothing else changed; `navd store check` says so first.
    @Test func aDatabaseOfVersionFiveGetsTheIdempotencyTable() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        try Self.makeOldDatabase(at: path, through: 4)
        try Self.execute("INSERT INTO migrations VALUES (5, 0)", at: path)
        #expect(try SQLiteStore.inspect(path: path).lines.contains { $0.hasPrefix("  schema: version 5 (navd upgrades it to 11") })
        let before = try Self.objects(at: path)
        let fixture = try Fixture(path: path, threshold: 4)
        let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        fixture.store.close()
        #expect(
            try Self.objects(at: path)
                == (before + [
                    "table idempotency", "index idempotency_created_at", "index idempotency_session", "table feed", "index feed_blocks",
                    "table feed_checkpoints"
                ]).sorted {
                    $0.split(separator: " ")[1] < $1.split(separator: " ")[1]
                })
        #expect(
            try Self.migrations(at: path).map { $0.split(separator: "|").first } == [
                "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"
            ])
        #expect(try Self.rows("sessions", at: path).count == 1)
        #expect(try Fixture(path: path, threshold: 4).store.load(created.session.id) != nil)
    }

    /// A file of schema version 6 gets the feed table and version 7, nothing else changed; its
    /// sessions open and write records from then on.
    @Test func aDatabaseOfVersionSixGetsTheFeedTable() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        try Self.makeOldDatabase(at: path, through: 4)
        try Self.execute("BEGIN; \(SQLiteStore.idempotencyTables); INSERT INTO migrations VALUES (5, 0), (6, 0); COMMIT", at: path)
        #expect(
            try SQLiteStore.inspect(path: path).lines.contains {
                $0.hasPrefix(
                    "  schema: version 6 (navd upgrades it to 11 when it next starts: it adds the feed and checkpoint tables and builds")
            })
        let before = try Self.objects(at: path)
        let fixture = try Fixture(path: path, threshold: 4)
        let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        #expect(try fixture.store.feed(from: .oldest, limit: 10, form: .full).entries.map(\.id) == ["\(created.session.id):1"])
        fixture.store.close()
        #expect(
            try Self.objects(at: path)
                == (before + ["table feed", "index feed_blocks", "table feed_checkpoints"]).sorted {
                    $0.split(separator: " ")[1] < $1.split(separator: " ")[1]
                })
        #expect(
            try Self.migrations(at: path).map { $0.split(separator: "|").first } == [
                "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"
            ])
        #expect(try Self.rows("feed", at: path).count == 1)
    }

    /// What a crash of navd before schema version 5 left in its change log, next to its database,
    /// is folded in after the stamp: the log's format did not change.
    @Test func aCrashsChangeLogNextToADatabaseOfTheSchemaBeforeIsFoldedIn() throws {
        let folder = try TemporaryFolder()
        let scratch = "\(folder.path)/scratch.db"
        let path = "\(folder.path)/navd.db"
        var expected: [String: (version: Int, events: [LifecycleEvent])] = [:]
        do {
            // No compaction: every navigation below is only in the change log.
            let fixture = try Fixture(path: scratch, threshold: 1000)
            for _ in 0..<2 {
                let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
                expected[created.session.id] = (created.session.state.version, created.events)
            }
            for step in 0..<6 {
                for id in expected.keys {
                    let mutation = try fixture.navigate(id, step % 2 == 0 ? SQLiteStoreTests.pathA : SQLiteStoreTests.pathB)
                    expected[id]?.version = mutation.session.state.version
                    expected[id]?.events += mutation.events
                }
            }
            // Dropped without close(), as by `kill -9`.
            fixture.store.waitForCompaction()
        }
        try Self.makeOldDatabase(at: path, through: 4)
        try Self.copyRows(from: scratch, into: path)
        let logs = ChangeLog.files(prefix: scratch)
        #expect(!logs.isEmpty)
        for (_, file) in logs {
            try FileManager.default.copyItem(atPath: file, toPath: path + file.dropFirst(scratch.count))
        }
        #expect(try ChangeLog.read(prefix: path).records.count == 12)

        let fixture = try Fixture(path: path, threshold: 1000)
        for (id, entry) in expected {
            #expect(try fixture.store.load(id)?.state.version == entry.version)
            #expect(try fixture.allEvents(id) == entry.events)
        }
        fixture.store.close()
        #expect(ChangeLog.files(prefix: path).isEmpty, "folded into the database")
        #expect(try Self.migrations(at: path).last?.hasPrefix("11|") == true)
    }
}

extension SQLiteSchemaTests {
    /// A file of a shape navd does not know, and what the refusal must say about it.
    struct UnknownShape: CustomTestStringConvertible, Sendable {
        var name: String
        var make: @Sendable (_ path: String) throws -> Void
        var found: [String]
        var testDescription: String { name }
    }

    static func execute(_ sql: String, at path: String) throws {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute(sql)
    }

    /// A version-4 database that `sql` then changes behind navd's back.
    static func version4(then sql: String) -> @Sendable (_ path: String) throws -> Void {
        { path in
            try makeOldDatabase(at: path, through: 4)
            try execute(sql, at: path)
        }
    }

    static let unknownShapes: [UnknownShape] = [
        UnknownShape(
            name: "development schema 1 (one event per row, clustered by session)",
            make: { try makeOldDatabase(at: $0, through: 1) },
            found: [
                "found schema version 1 (migrations 1), which only development builds of navd wrote", "unexpected: table events",
                "missing: index event_log_session, table event_log, table store_meta"
            ]
        ),
        UnknownShape(
            name: "a newer navd's version",
            make: version4(then: "INSERT INTO migrations VALUES (5, 0), (6, 0), (7, 0), (8, 0), (9, 0), (10, 0), (11, 0), (12, 0)"),
            found: ["found schema version 12 (migrations 1…12), newer than this navd's 11"]
        ),
        UnknownShape(
            name: "version 5 with a column navd does not know",
            make: version4(then: "INSERT INTO migrations VALUES (5, 0); ALTER TABLE sessions ADD COLUMN note TEXT"),
            found: [
                "found schema version 5 (migrations 1…5); different: table sessions (",
                "touched_at INTEGER NOT NULL, note TEXT, PRIMARY KEY (id)) where version 5 has"
            ]
        ),
        UnknownShape(
            name: "version 4 without one of its indexes",
            make: version4(then: "DROP INDEX sessions_touched_at"),
            found: ["found schema version 4 (migrations 1…4); missing: index sessions_touched_at"]
        ),
        UnknownShape(
            name: "versions no navd recorded",
            make: version4(then: "DELETE FROM migrations WHERE version = 3"),
            found: ["found schema version 4 (migrations 1, 2, 4)", "(migrations 1, 2, 4). This navd opens"]
        ),
        UnknownShape(
            name: "another program's database, in rollback-journal mode",
            make: {
                try execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')", at: $0)
            },
            found: [
                "found no schema version (no migrations table); unexpected: table notes; missing: index event_log_session, "
                    + "index feed_blocks, index idempotency_created_at, index idempotency_session, index sessions_touched_at, "
                    + "table event_log and 7 more"
            ]
        )
    ]

    /// Refused before anything is written: not the tables, not the journal mode (which
    /// `journal_mode=WAL` would write into the header of a rollback-journal file), no change log.
    @Test(arguments: unknownShapes) func aShapeNavdDoesNotKnowIsRefusedWithWhatWasFoundAndLeftAsItWas(_ shape: UnknownShape) throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        try shape.make(path)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let files = try Self.files(in: folder.path)
        do {
            _ = try Fixture(path: path, threshold: 10)
            Issue.record("a database of an unknown shape was opened")
        } catch let error as StoreError {
            #expect(
                error.message.hasPrefix("the database \(path) has a schema this navd does not know, so it is refused and left as it was: "))
            for fragment in shape.found { #expect(error.message.contains(fragment), "\(error)") }
        }
        #expect(FileManager.default.contents(atPath: path) == bytes, "the file is unchanged")
        #expect(try Self.files(in: folder.path) == files, "no WAL or change log file left behind")

        let (lines, damaged) = try SQLiteStore.inspect(path: path)
        #expect(damaged, "navd store check fails on it")
        #expect(
            lines.contains { $0.hasPrefix("  schema: NOT ONE NAVD OPENS: ") && $0.contains(shape.found[0].dropFirst("found ".count)) },
            "\(lines)")
        #expect(FileManager.default.contents(atPath: path) == bytes, "nor does the check change it")
    }
}
