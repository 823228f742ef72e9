import Foundation
import NavCore
import NavJSON
import NavSnapshot
import NavWire
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStorePostgres
@testable import NavStoreSQLite
@testable import NavTestSupport

/// Snapshots stored before the flows (docs/design.md, "Flows"; schema 1: no `pending`, no `graphVersion`) still load on
/// every store that keeps snapshots, and what the flows add to a session (a pending navigation, a graph
/// version moved by an upgrade) survives the store.
@Suite struct SnapshotUpgradeTests {
    /// A snapshot as navd wrote it before schema 2: the same members, `schema: 1`.
    static func schemaOne(_ state: SessionState) throws -> [UInt8] {
        var members = try #require(try JSONValue(parsing: state.snapshotBytes).objectValue)
        #expect(members["pending"] == nil && members["graphVersion"] == nil)
        members["schema"] = 1
        return JSONValue.object(members).jsonBytes
    }

    /// news.json as version 1 and, with one more scene, version 2.
    static func graphs() throws -> GraphRegistry {
        let graphs = try TestFixtures.graphs()
        var document = try #require(try graphs.latest("news")?.document.objectValue)
        var scenes = try #require(document["scenes"]?.objectValue)
        scenes["about"] = [:]
        document["scenes"] = .object(scenes)
        #expect(try graphs.add(.object(document)).0.version == 2)
        return graphs
    }

    /// Loads a schema-1 session, then stores and reloads it with a pending navigation on version 2.
    func check(_ open: () throws -> any SessionStore, rewrite: (_ id: String, _ snapshot: [UInt8]) throws -> Void, graphs: GraphRegistry)
        throws
    {
        let id = SessionService.newID()
        var (session, events) = try TestFixtures.session(id, in: graphs)
        session.graphVersion = 1
        var store = try open()
        try store.insert(session, events: events)
        store.close()
        try rewrite(id, try Self.schemaOne(session.state))

        store = try open()
        let loaded = try #require(try store.load(id))
        #expect(loaded.state == session.state)
        #expect(loaded.state.pending == nil)
        #expect(loaded.graphVersion == 1)

        var changed = loaded
        changed.state.version += 1
        changed.state.pending = "/top/settings"
        changed.graphVersion = 2
        #expect(try store.update(changed, expectedVersion: loaded.state.version, events: [], eventsJSON: Array("[]".utf8)))
        store.close()
        store = try open()
        let reloaded = try #require(try store.load(id))
        #expect(reloaded.state.pending == "/top/settings")
        #expect(reloaded.graphVersion == 2)
        #expect(reloaded.state == changed.state)
        store.close()
    }

    @Test func sqliteReadsSchemaOneAndKeepsWhatSchemaTwoAdds() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let graphs = try Self.graphs()
        try check(
            { try SQLiteStore(path: path, decode: StoreFactory.snapshotDecoder(graphs, readingThrough: false)) },
            rewrite: { id, snapshot in
                let connection = try SQLiteConnection(path: path)
                try connection.statement("UPDATE sessions SET snapshot = ?, snapshot_schema = 1 WHERE id = ?").bind(1, utf8: snapshot).bind(
                    2, id
                ).run()
                #expect(connection.changes == 1)
            },
            graphs: graphs
        )
    }

    @Test(.needsPostgres) func postgresReadsSchemaOneAndKeepsWhatSchemaTwoAdds() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let graphs = try Self.graphs()
        try check(
            { try PostgresStore(url: cluster.url, connections: 2, decode: StoreFactory.snapshotDecoder(graphs)) },
            rewrite: { id, snapshot in
                let text = String(decoding: snapshot, as: UTF8.self).replacingOccurrences(of: "'", with: "''")
                let updated = try cluster.query(
                    "UPDATE sessions SET snapshot = '\(text)', snapshot_schema = 1 WHERE id = '\(id)' RETURNING id")
                #expect(updated.contains(id))
            },
            graphs: graphs
        )
    }
}
