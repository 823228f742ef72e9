/// The PostgreSQL store's schema: the migrations, in order. `migrate()` (PostgresStore.swift)
/// applies those a database has not had yet, under an advisory lock; the `migrations` table
/// records each one's number (its place in this list, from 1).
extension PostgresStore {
    static let migrations: [String] = [
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            graph TEXT NOT NULL,
            graph_version INTEGER NOT NULL,
            version BIGINT NOT NULL,
            token_hash BYTEA NOT NULL,
            snapshot_schema INTEGER NOT NULL,
            snapshot TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            touched_at BIGINT NOT NULL
        );
        CREATE INDEX sessions_touched_at ON sessions (touched_at);
        CREATE TABLE events (
            session_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE TABLE graphs (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            document TEXT NOT NULL,
            PRIMARY KEY (name, version)
        );
        """,
        // The order graphs were stored in: without --graph, the graph stored first is the default.
        // Existing rows are numbered as the table holds them (rows are never updated or deleted).
        """
        ALTER TABLE graphs ADD COLUMN stored BIGSERIAL;
        """,
        // Answers to requests with an Idempotency-Key (docs/design.md, "Idempotency"), written in the change's
        // own statement, so a retry through any process replays; they go with their session and
        // after the session TTL.
        """
        CREATE TABLE idempotency (
            key TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            fingerprint BYTEA NOT NULL,
            status INTEGER NOT NULL,
            headers TEXT NOT NULL,
            body TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE INDEX idempotency_session ON idempotency (session_id);
        CREATE INDEX idempotency_created_at ON idempotency (created_at);
        """
            // A change's events as one row (a JSON array, as SQLite's event_log holds them), not a
            // row each: one INSERT of text per change, no JSON parsed by PostgreSQL (docs/design.md, "PostgreSQL").
            + """
            CREATE TABLE event_log (
                session_id TEXT NOT NULL,
                last_seq BIGINT NOT NULL,
                first_seq BIGINT NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (session_id, last_seq)
            );
            INSERT INTO event_log (session_id, last_seq, first_seq, body) SELECT session_id, seq, seq, '[' || body || ']' FROM events;
            DROP TABLE events;
            """,
        // Room in each page for a changed row's new version, so that an update whose indexed
        // columns are unchanged (touched_at is written to the second) stays in its page (HOT).
        """
        ALTER TABLE sessions SET (fillfactor = 70);
        """,
        // A change's Idempotency-Key filed as a digest, as navd files it from now on
        // (SealedAnswer.changeKeyDigest): the keys kept in the clear until now are rewritten, so a
        // retry across the upgrade still replays.
        """
        UPDATE idempotency
        SET key = split_part(key, ' ', 1) || ' ' || encode(sha256(convert_to('navd change key ' || substr(key, strpos(key, ' ') + 1), 'UTF8')), 'hex')
        WHERE key NOT LIKE 'create %';
        """,
        // Facts about the store as a whole. `default_graph`: the graph stored first, the default
        // without --graph; recorded once, so removing that graph's first version (the oldest
        // row) does not make another graph the default.
        """
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO store_meta (key, value) SELECT 'default_graph', name FROM graphs ORDER BY stored LIMIT 1;
        """,
        // The feed: each applied change's record, written in the change's own transaction, in
        // the order of the transaction that wrote it (its id, which `pg_current_xact_id()` gives
        // every row of it), then of a sequence. `feed_state`, one row, is the sweep's: the newest
        // cursor it swept (the floor), and the records and bytes below `counted`, which only the
        // sweep and purges update, never a change, so that changes do not queue for that row.
        """
        CREATE TABLE feed (
            transaction_id XID8 NOT NULL DEFAULT pg_current_xact_id(),
            position BIGSERIAL,
            session_id TEXT NOT NULL,
            version BIGINT NOT NULL,
            is_end BOOLEAN NOT NULL,
            graph TEXT NOT NULL,
            time BIGINT NOT NULL,
            attributes JSONB NOT NULL,
            full_form TEXT NOT NULL,
            analytics TEXT NOT NULL,
            cost INTEGER NOT NULL,
            PRIMARY KEY (transaction_id, position)
        );
        CREATE INDEX feed_session ON feed (session_id, version);
        CREATE INDEX feed_time ON feed (time);
        CREATE TABLE feed_state (
            only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
            counted_transaction XID8 NOT NULL,
            counted_position BIGINT NOT NULL,
            records BIGINT NOT NULL,
            bytes BIGINT NOT NULL,
            floor_transaction XID8 NOT NULL,
            floor_position BIGINT NOT NULL
        );
        INSERT INTO feed_state VALUES (true, '0', 0, 0, 0, '0', 0);
        """,
        // Each feed record's view (its `to` screen's scene when that is another screen than its
        // `from` one; NULL otherwise), written with the record, and an index of the views by graph,
        // then session in version order, that holds what traffic and funnels read (docs/design.md,
        // "Traffic and funnels").
        // The records already kept get theirs from their screens, once.
        """
        ALTER TABLE feed ADD COLUMN to_scene TEXT, ADD COLUMN from_scene TEXT;
        UPDATE feed SET
            to_scene = ('{' || full_form)::jsonb #>> '{to,screen,scene}',
            from_scene = ('{' || full_form)::jsonb #>> '{from,screen,scene}'
        WHERE ('{' || full_form)::jsonb #>> '{to,screen,id}' IS NOT NULL
            AND ('{' || full_form)::jsonb #>> '{to,screen,id}' IS DISTINCT FROM ('{' || full_form)::jsonb #>> '{from,screen,id}';
        CREATE INDEX feed_views ON feed (graph, session_id, version) INCLUDE (time, to_scene, from_scene) WHERE to_scene IS NOT NULL;
        """,
        // Sessions' snapshots at past versions (`CheckpointStore`), by session and version;
        // `kept` orders them by when they were kept, the oldest going first when their bytes
        // exceed their budget.
        """
        CREATE TABLE feed_checkpoints (
            session_id TEXT NOT NULL,
            version BIGINT NOT NULL,
            snapshot TEXT NOT NULL,
            kept BIGINT GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (session_id, version)
        );
        CREATE INDEX feed_checkpoints_kept ON feed_checkpoints (kept);
        """,
        // The feed's two indexes by session as one: by session and version, holding the graph,
        // time and scenes that traffic and funnels read (an index-only scan of every graph's
        // entries). Each index cost a change about a third of what the rest of its statement
        // did (BENCHMARKS.md, "Navigation analytics").
        """
        DROP INDEX feed_views;
        DROP INDEX feed_session;
        CREATE INDEX feed_session ON feed (session_id, version) INCLUDE (graph, time, to_scene, from_scene);
        """
    ]
}
