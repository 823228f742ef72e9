import Foundation
import NavCore
import NavWire
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStorePostgres
@testable import NavTestSupport

/// The process-local copy of sessions (docs/design.md, "PostgreSQL": no read first) never shows in an
/// answer: two session services on two stores of one database stand for two processes, without
/// notices, so that one's copy stays behind while the other changes the session.
@Suite(.needsPostgres) struct PostgresSessionCopyTests {
    final class Processes {
        let cluster: PostgresCluster
        let stores: [PostgresStore]
        let services: [SessionService]

        init() throws {
            let cluster = try PostgresCluster()
            self.cluster = cluster
            let graphs = try TestFixtures.graphs()
            stores = try (0..<2).map { _ in
                try PostgresStore(url: cluster.url, connections: 2, decode: StoreFactory.snapshotDecoder(graphs))
            }
            services = stores.map { SessionService(store: $0, graphs: graphs, configuration: .init(), now: Clock.milliseconds) }
        }

        deinit {
            for store in stores { store.close() }
            cluster.stop()
        }

        /// A session created through the first, changed there (its copy at version 2), then
        /// changed through the second to `path` (version 3).
        func behind(_ path: String) throws -> (id: String, credentials: Credentials) {
            let created = try services[0].create(graph: nil, start: nil, context: [:])
            let credentials = Credentials(bearer: Token.digest(created.token))
            let id = created.session.id
            _ = try change(0, id, credentials, .navigate("^/top/list_news(category=1)"))
            _ = try change(1, id, credentials, .navigate(path))
            #expect(stores[0].cache.get(id)?.state.version == 2)
            return (id, credentials)
        }

        func change(_ process: Int, _ id: String, _ credentials: Credentials, _ intent: Intent, ifMatch: String? = nil) throws
            -> SessionService.Mutation
        {
            try services[process].apply(.intent(intent), to: id, credentials: credentials, ifMatch: ifMatch.map(IfMatch.init)) { $0 }
        }
    }

    @Test func aChangeFromACopyBehindIsAppliedToTheSessionAsItIs() throws {
        let processes = try Processes()
        let (id, credentials) = try processes.behind("^/top/list_news(category=2)/show_news(id=5)")
        // From the copy, `back 2` would underflow (/top/list_news is two deep); the session is three deep.
        let back = try processes.change(0, id, credentials, .back(2))
        #expect(back.session.state.version == 4)
        #expect(back.session.state.path.description == "/top")
        #expect(try processes.stores[1].load(id)?.state.version == 4)
    }

    @Test func ifMatchIsCheckedAgainstTheSessionNotTheCopy() throws {
        let processes = try Processes()
        let (id, credentials) = try processes.behind("^/top/list_news(category=2)")
        let matched = try processes.change(0, id, credentials, .navigate("^/top"), ifMatch: "\"3\"")
        #expect(matched.session.state.version == 4)
        // And a stale If-Match is refused with the session's version, not the copy's.
        _ = try processes.change(1, id, credentials, .navigate("^/top/list_news(category=3)"))
        #expect(throws: ServiceError.self) { try processes.change(0, id, credentials, .navigate("^/top"), ifMatch: "\"4\"") }
        do {
            _ = try processes.change(0, id, credentials, .navigate("^/top"), ifMatch: "\"4\"")
        } catch let error as ServiceError {
            #expect(error.code == .versionConflict)
            #expect(error.currentVersion == 5)
        }
    }

    @Test func aNoOpOnTheCopyIsWorkedOutAgainOnTheSession() throws {
        let processes = try Processes()
        let (id, credentials) = try processes.behind("^/top")
        // On the copy (/top/list_news(category=1)) this is a no-op; on the session it is not.
        let again = try processes.change(0, id, credentials, .navigate("^/top/list_news(category=1)"))
        #expect(again.session.state.version == 4)
        #expect(!again.events.isEmpty)
        // And a real no-op answers the session's version.
        let none = try processes.change(0, id, credentials, .navigate("^/top/list_news(category=1)"))
        #expect(none.events.isEmpty)
        #expect(none.session.state.version == 4)
    }

    @Test func deleteChecksIfMatchOnAFreshRead() throws {
        let processes = try Processes()
        let (id, credentials) = try processes.behind("^/top")
        try processes.services[0].delete(id, credentials: credentials, ifMatch: IfMatch("\"3\""))
        #expect(try processes.stores[1].load(id) == nil)
    }
}
