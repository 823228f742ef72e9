import NavSessions
import Testing

@testable import NavTestSupport

/// The memory store's meta values (webhook positions and leases).
@Suite struct MemoryStoreMetaTests {
    @Test func metaValuesAreComparedAndSet() throws {
        try MetaStoreContract.check(MemoryStore())
    }

    @Test func oneOfTwoRacingWritersWinsEachRound() throws {
        let store = MemoryStore()
        try MetaStoreContract.checkRace(store, store)
    }
}
