import NavSessions

/// The SQLite store's tables: created in one step, with upgrades that add tables, columns and
/// indexes (and versions 10 and 11, which replace the feed's indexes), and nothing else accepted.
///
/// The schema version is the highest `version` in the `migrations` table. A new database gets
/// ``tables`` and version ``schemaVersion`` in one transaction. navd before version 5 reached the
/// same tables as version 5 in four steps while it was developed and recorded them as versions
/// 1…4; version 6 added the `idempotency` table (answers kept under an `Idempotency-Key`, so a
/// retry after a restart replays), version 7 the `feed` table (the analytics feed's records),
/// version 8 the feed's view columns and their index (traffic and funnels), version 9 the
/// `feed_checkpoints` table (sessions' snapshots at past versions), version 10 one index of the
/// feed by session in place of the two by session and by graph, version 11 that index led by
/// the record's block of positions. A file of an earlier version's tables — recorded as 10, 9,
/// 8, 7, 6, as 5, or as 1…4 — is upgraded: what was added since is created (version 8's columns
/// filled from the records kept, version 11's index built from them) and the versions recorded,
/// nothing else changed. Any other
/// file — a development build's shape (an `events`, `event_batches` or `journal` table), a newer
/// navd's, another program's — is refused with what was found, before anything is written to it.
///
/// The version stays in `migrations` rather than `PRAGMA user_version` because navd before 5
/// reads it there: it refuses a newer file ("this navd knows up to 4") instead of trying to
/// create tables that already exist.
extension SQLiteStore {
    /// The schema this navd creates and opens.
    static let schemaVersion = 11
    /// The first schema navd upgrades from: ``tables`` without ``additions``.
    static let previousSchemaVersion = 5
    /// Before ``previousSchemaVersion``, navd recorded the same tables as versions 1…4.
    static let developmentVersions = 4

    /// The tables of schema version 5, the first part of ``tables``.
    static let previousTables = """
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
        -- Compaction writes a session's logged events as one batch of several kilobytes: in a
        -- table clustered by session (WITHOUT ROWID) such rows split pages wherever they land; in
        -- a rowid table they are appended, and only a small index entry lands by session.
        CREATE TABLE event_log (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            body TEXT NOT NULL
        );
        CREATE INDEX event_log_session ON event_log (session_id, first_seq);
        CREATE TABLE graphs (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            document TEXT NOT NULL,
            PRIMARY KEY (name, version)
        );
        -- `compacted_seq`: the last change log seq the tables above hold; `probed_at`: written by
        -- the disk probe of isAvailable(); `log_prefix`, `log_device`, `log_inode`: where the
        -- change log lives, and the file that recorded it (SQLiteStore+Location.swift);
        -- `default_graph`: the graph stored first (SQLiteStore+Graphs.swift).
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO store_meta (key, value) VALUES ('compacted_seq', 0);
        -- The schema versions this file has had, and when (Unix seconds).
        CREATE TABLE migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);

        """

    /// Schema version 6's addition: the answers to requests with an `Idempotency-Key` (docs/design.md, "Routes and wire shapes"
    /// Retries), filed under the key's digest (``KeptAnswer/key``), a change's written by the fold
    /// of its change log record, a create's with its session. They go with their session, and a
    /// change's after the session TTL.
    static let idempotencyTables = """
        CREATE TABLE idempotency (
            key TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            fingerprint BLOB,
            status INTEGER NOT NULL,
            headers TEXT,
            body BLOB,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX idempotency_session ON idempotency (session_id);
        CREATE INDEX idempotency_created_at ON idempotency (created_at);
        """

    /// Schema version 7's addition: the feed's records (``FeedRecord``), by position
    /// (``FeedCursor/position``: the order they became visible, ``SQLiteStore`` says how), with
    /// their cost (``FeedRecord/cost``), so a sweep by bytes reads the oldest rows only. A
    /// create's and a delete's are written in their transactions, a change's by the fold of its
    /// change log record. `store_meta` keeps `feed_floor`, the newest position swept, and
    /// `feed_position`, the newest position a purge or a sweep removed, so that numbering after a
    /// restart goes on above every position a reader was handed.
    static let feedTables = """
        CREATE TABLE feed (
            position INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            is_end INTEGER NOT NULL,
            graph TEXT NOT NULL,
            time INTEGER NOT NULL,
            attributes TEXT NOT NULL,
            full TEXT NOT NULL,
            analytics TEXT NOT NULL,
            cost INTEGER NOT NULL
        );
        CREATE INDEX feed_session ON feed (session_id, version);

        """

    /// Schema version 8's addition: each feed record's view (``FeedRecord/toScene``, and
    /// ``FeedRecord/fromScene``; both NULL for a record that is not a view), written with the
    /// record, and an index of the views by graph, then session in version order, that holds what
    /// traffic and funnels read (docs/design.md, "Traffic and funnels"), so they read no record's
    /// JSON and no table row, and a funnel sees each session's views together.
    /// The records already kept get theirs from their `from` and `to` screens, once.
    static let feedViewColumns = """
        ALTER TABLE feed ADD COLUMN to_scene TEXT;
        ALTER TABLE feed ADD COLUMN from_scene TEXT;
        UPDATE feed SET
            to_scene = json_extract('{' || full, '$.to.screen.scene'),
            from_scene = json_extract('{' || full, '$.from.screen.scene')
        WHERE json_extract('{' || full, '$.to.screen.id') IS NOT NULL
            AND json_extract('{' || full, '$.to.screen.id') IS NOT json_extract('{' || full, '$.from.screen.id');
        CREATE INDEX feed_views ON feed (graph, session_id, version, time, to_scene, from_scene) WHERE to_scene IS NOT NULL;

        """

    /// Schema version 9's addition: sessions' snapshots at past versions (``CheckpointStore``), by
    /// session and version; the rowid orders them by when they were kept, oldest going first when
    /// their bytes exceed their budget.
    static let checkpointTable = """
        CREATE TABLE feed_checkpoints (
            session_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            PRIMARY KEY (session_id, version)
        );

        """

    /// Schema version 10's change: the feed's one index, by session in version order, which
    /// also holds what traffic and funnels read of each record (its graph, time and view), so
    /// they read it alone, as they read `feed_views` before. Each index takes an entry at its
    /// session's place with every record: one index instead of two halves the pages a fold
    /// writes for them (BENCHMARKS.md, "Navigation analytics"). Traffic now reads the entries of
    /// every graph, which a million records read within its second.
    static let feedIndex = """
        DROP INDEX feed_views;
        DROP INDEX feed_session;
        CREATE INDEX feed_session ON feed (session_id, version, graph, time, to_scene, from_scene);

        """

    /// Schema version 11's change: the feed's one index led by the record's block
    /// (``feedBlockShift``: `position >> 10`, 1,024 positions a block), then session and
    /// version, with the graph, time and view traffic and funnels read. A fold inserts each
    /// record's entry in the newest block, a few dozen pages that each transaction of the fold
    /// writes once, instead of at its session's place, one page for each session among its
    /// records (BENCHMARKS.md, "Navigation analytics"). A session's records are read a block at a
    /// time, oldest first (``SQLiteStore/sessionRecords(of:after:limit:columns:_:)``).
    static let feedBlockIndex = """
        DROP INDEX feed_session;
        CREATE INDEX feed_blocks ON feed (position >> 10, session_id, version, graph, time, to_scene, from_scene);

        """

    /// How many of a position's low bits the feed's index leaves out of its block
    /// (``feedBlockIndex``): every query that seeks a block writes `position >> 10`, the
    /// indexed expression, word for word.
    static let feedBlockShift = 10

    /// What each schema version after ``previousSchemaVersion`` added, in order: an upgrade from
    /// version `v` runs the scripts of the versions after it.
    static let additions: [(version: Int, script: String)] = [
        (6, idempotencyTables), (7, feedTables), (8, feedViewColumns), (9, checkpointTable),
        (10, feedIndex), (11, feedBlockIndex)
    ]

    /// The current tables, as one script.
    static let tables = previousTables + additions.map(\.script).joined()

    /// What a database holds, in the terms its schema is judged by.
    package struct SchemaShape: Equatable {
        /// Each table (its columns and key), index (its columns), view and trigger, by name.
        package var objects: [String: String]
        /// The versions in `migrations`, ascending; none without that table.
        package var versions: [Int]
    }

    /// What start-up does to the schema.
    package enum SchemaStep: Equatable {
        /// An empty database: create ``tables``.
        case create
        /// navd's earlier schema, recorded as `from`: create the ``additions`` after it and record
        /// the versions after `from`, nothing else.
        case upgrade(from: Int)
        /// Already the current schema: nothing.
        case current
    }

    /// Reads the shape of the database (without writing to it).
    static func schemaShape(of connection: SQLiteConnection) throws(StoreError) -> SchemaShape {
        let objects = try schemaObjects(of: connection)
        var versions: [Int] = []
        let hasVersions = try connection.statement("SELECT COUNT(*) FROM pragma_table_info('migrations') WHERE name = 'version'")
        _ = try hasVersions.step()
        let readable = hasVersions.int(0) > 0
        hasVersions.reset()
        if readable {
            let rows = try connection.statement("SELECT version FROM migrations ORDER BY version")
            defer { rows.reset() }
            while try rows.step() { versions.append(Int(rows.int(0))) }
        }
        return SchemaShape(objects: objects, versions: versions)
    }

    /// The tables, indexes, views and triggers of `connection`'s database, described by name.
    package static func schemaObjects(of connection: SQLiteConnection) throws(StoreError) -> [String: String] {
        let master = try connection.statement(
            "SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master WHERE substr(name, 1, 7) <> 'sqlite_'"
        )
        var rows: [(type: String, name: String, table: String, sql: String)] = []
        while try master.step() { rows.append((master.text(0), master.text(1), master.text(2), master.text(3))) }
        master.reset()
        var objects: [String: String] = [:]
        for row in rows {
            switch row.type {
            case "table":
                let columns = try connection.statement(
                    #"SELECT name, type, "notnull", COALESCE(dflt_value, ''), pk FROM pragma_table_info(?) ORDER BY cid"#
                ).bind(1, row.name)
                var described: [String] = []
                var key: [(position: Int64, name: String)] = []
                while try columns.step() {
                    let name = columns.text(0)
                    let defaultValue = columns.text(3)
                    described.append(
                        "\(name) \(columns.text(1))" + (columns.int(2) != 0 ? " NOT NULL" : "")
                            + (defaultValue.isEmpty ? "" : " DEFAULT \(defaultValue)")
                    )
                    if columns.int(4) > 0 { key.append((columns.int(4), name)) }
                }
                columns.reset()
                if !key.isEmpty {
                    described.append("PRIMARY KEY (\(key.sorted { $0.position < $1.position }.map(\.name).joined(separator: ", ")))")
                }
                let withoutRowID = row.sql.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(
                    "WITHOUT ROWID")
                objects[row.name] = "table \(row.name) (\(described.joined(separator: ", ")))" + (withoutRowID ? " WITHOUT ROWID" : "")
            case "index":
                let columns = try connection.statement("SELECT COALESCE(name, '(an expression)') FROM pragma_index_info(?) ORDER BY seqno")
                    .bind(1, row.name)
                var names: [String] = []
                while try columns.step() { names.append(columns.text(0)) }
                columns.reset()
                let kind = try connection.statement(#"SELECT "unique", partial FROM pragma_index_list(?) WHERE name = ?"#)
                    .bind(1, row.table).bind(2, row.name)
                let (unique, partial) = try kind.step() ? (kind.int(0) != 0, kind.int(1) != 0) : (false, false)
                kind.reset()
                objects[row.name] =
                    "index \(row.name) ON \(row.table) (\(names.joined(separator: ", ")))"
                    + (unique ? " UNIQUE" : "") + (partial ? " WHERE …" : "")
            default:
                objects[row.name] = "\(row.type) \(row.name) ON \(row.table)"
            }
        }
        return objects
    }

    /// The objects of ``tables``, as ``schemaObjects(of:)`` describes them.
    static func currentSchemaObjects() throws(StoreError) -> [String: String] {
        try schemaObjects(of: tables)
    }

    /// The objects `script` creates, as ``schemaObjects(of:)`` describes them.
    static func schemaObjects(of script: String) throws(StoreError) -> [String: String] {
        let memory = try SQLiteConnection(path: ":memory:")
        defer { memory.close() }
        try memory.execute(script)
        return try schemaObjects(of: memory)
    }

    /// What start-up does to a database of shape `found`, if navd opens it.
    static func schemaStep(for found: SchemaShape, current: [String: String]) -> SchemaStep? {
        if found.objects.isEmpty { return .create }
        if found.objects == current { return found.versions.last == schemaVersion ? .current : nil }
        guard let version = found.versions.last else { return nil }
        // Version 5's tables were recorded as 1…4 before version 5.
        let recorded = found.versions == Array(1...developmentVersions) ? previousSchemaVersion : version
        guard recorded >= previousSchemaVersion, recorded < schemaVersion, found.objects == objects(ofVersion: recorded, current)
        else { return nil }
        return .upgrade(from: version)
    }

    /// Version 5's objects: `current` without those the later versions added.
    package static func previousObjects(_ current: [String: String]) -> [String: String] {
        objects(ofVersion: previousSchemaVersion, current)
    }

    /// The objects of schema `version` (``previousSchemaVersion`` or later): those its scripts
    /// create (a later version may change a table an earlier one made, as 8 adds the feed's
    /// columns, so they are built rather than subtracted from `current`).
    static func objects(ofVersion version: Int, _ current: [String: String]) -> [String: String] {
        guard version < schemaVersion else { return current }
        let script = previousTables + additions.filter { $0.version <= version }.map(\.script).joined()
        return (try? schemaObjects(of: script)) ?? [:]
    }

    /// What start-up does to a database of shape `found`.
    /// - Throws: when it is not empty, not the current schema and not navd's previous one; the
    ///   message says what was found, and nothing has been written to the file.
    static func schemaStep(for found: SchemaShape, path: String) throws(StoreError) -> SchemaStep {
        let current = try currentSchemaObjects()
        if let step = schemaStep(for: found, current: current) { return step }
        throw StoreError(
            message: "the database \(path) has a schema this navd does not know, so it is refused and left as it was: "
                + "found \(describe(found, against: current)). This navd opens schema version \(schemaVersion) and upgrades "
                + "navd's versions \(developmentVersions) to \(schemaVersion - 1) to it; it refuses the schemas of development builds, of a newer navd "
                + "and of other programs. Open it with the navd that wrote it, or start on a new file"
        )
    }

    /// Creates the tables, or upgrades navd's previous schema, in one transaction.
    package static func apply(_ step: SchemaStep, _ connection: SQLiteConnection) throws(StoreError) {
        let recorded: ClosedRange<Int>
        switch step {
        case .current: return
        case .create: recorded = schemaVersion...schemaVersion
        case .upgrade(let from): recorded = from + 1...schemaVersion
        }
        try connection.transaction { () throws(StoreError) in
            switch step {
            case .create: try connection.execute(tables)
            case .upgrade(let from):
                let effective = from <= developmentVersions ? previousSchemaVersion : from
                for addition in additions where addition.version > effective { try connection.execute(addition.script) }
            case .current: break
            }
            for version in recorded {
                try connection.statement("INSERT INTO migrations (version, applied_at) VALUES (?, strftime('%s','now'))")
                    .bind(1, Int64(version)).run()
            }
        }
    }

    /// One line for `navd store check`: the schema version, and whether navd opens it.
    /// - Returns: the line, and whether navd refuses the file.
    static func schemaReport(_ connection: SQLiteConnection) throws(StoreError) -> (line: String, refused: Bool) {
        let found = try schemaShape(of: connection)
        let current = try currentSchemaObjects()
        switch schemaStep(for: found, current: current) {
        case .create: return ("schema: none yet (navd creates version \(schemaVersion))", false)
        case .current: return ("schema: version \(schemaVersion)", false)
        case .upgrade(let from):
            let added =
                from < 6
                ? "adds the idempotency, feed and checkpoint tables and "
                : from < 7
                    ? "adds the feed and checkpoint tables and "
                    : from < 8
                        ? "adds the feed's view columns and the checkpoint table and "
                        : from < 9 ? "adds the checkpoint table and " : ""
            return (
                "schema: version \(from) (navd upgrades it to \(schemaVersion) when it next starts: it \(added)builds the feed's "
                    + "one index, changing nothing else)",
                false
            )
        case nil: return ("schema: NOT ONE NAVD OPENS: \(describe(found, against: current))", true)
        }
    }

    /// What was found, for a refusal: the versions recorded, and how the objects differ from ``tables``
    /// (from version 5's, for a file that says it is of version 5 or before).
    static func describe(_ found: SchemaShape, against current: [String: String]) -> String {
        var parts: [String] = []
        let versions = found.versions
        if let version = versions.last {
            let list =
                version >= 1 && versions == Array(1...version)
                ? (version == 1 ? "1" : "1…\(version)") : versions.map(String.init).joined(separator: ", ")
            var phrase = "schema version \(version) (migrations \(list))"
            if version > schemaVersion {
                phrase += ", newer than this navd's \(schemaVersion)"
            } else if version < developmentVersions {
                phrase += ", which only development builds of navd wrote"
            }
            parts.append(phrase)
        } else {
            parts.append(found.objects["migrations"] == nil ? "no schema version (no migrations table)" : "no schema version recorded")
        }
        // A file that says it is of version 5 or before is told how it differs from version 5.
        let (expected, expectedVersion) =
            versions.last.map { $0 <= previousSchemaVersion } == true
            ? (previousObjects(current), previousSchemaVersion) : (current, schemaVersion)
        /// "table journal": what an object is, without its columns.
        func kind(_ description: String) -> String { description.split(separator: " ").prefix(2).joined(separator: " ") }
        func list(_ items: [String]) -> String {
            items.count <= 6 ? items.joined(separator: ", ") : items.prefix(6).joined(separator: ", ") + " and \(items.count - 6) more"
        }
        let unexpected = found.objects.filter { expected[$0.key] == nil }.values.map(kind).sorted()
        if !unexpected.isEmpty { parts.append("unexpected: \(list(unexpected))") }
        let missing = expected.filter { found.objects[$0.key] == nil }.values.map(kind).sorted()
        if !missing.isEmpty { parts.append("missing: \(list(missing))") }
        let changed = expected.keys.sorted().compactMap { name -> String? in
            guard let have = found.objects[name], let want = expected[name], have != want else { return nil }
            return "\(have) where version \(expectedVersion) has \(want)"
        }
        if !changed.isEmpty { parts.append("different: \(list(changed))") }
        return parts.joined(separator: "; ")
    }
}
