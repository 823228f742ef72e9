import Foundation
import NavSessions
import Testing

@testable import NavCLI
@testable import NavStorePostgres
@testable import NavTestSupport

/// The PostgreSQL store's meta values on `store_meta`: compare-and-set, and two processes (two
/// stores on one database) racing for the same value, of which exactly one wins each time.
@Suite(.needsPostgres) struct PostgresMetaTests {
    @Test func metaValuesAreComparedAndSetAcrossProcesses() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let graphs = try TestFixtures.graphs()
        let stores = try (0..<2).map { _ in
            try PostgresStore(url: cluster.url, connections: 2, decode: StoreFactory.snapshotDecoder(graphs))
        }
        defer { for store in stores { store.close() } }
        try MetaStoreContract.check(stores[0])
        try MetaStoreContract.checkRace(stores[0], stores[1])
    }
}
