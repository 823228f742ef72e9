import Foundation
import Testing

@testable import NavCLI
@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

/// The SQLite store's locks, taken in their order (``SQLiteStore``): nesting them in it works,
/// and a debug build stops at one taken against it rather than deadlocking some day.
@Suite struct SQLiteLockOrderTests {
    static func store(in folder: TemporaryFolder) throws -> SQLiteStore {
        try SQLiteStore(path: "\(folder.path)/navd.db", decode: StoreFactory.snapshotDecoder(GraphRegistry()))
    }

    @Test func everyLockNestsInsideTheOnesBeforeIt() throws {
        let folder = try TemporaryFolder()
        let store = try Self.store(in: folder)
        defer { store.close() }
        let seen = try store.folding { _ throws(StoreError) -> Int in
            try store.withWriter { _ throws(StoreError) -> Int in
                try store.appending { append throws(StoreError) -> Int in
                    try store.withReader { _ throws(StoreError) -> Int in
                        store.withPublished { published in Int(append.nextSeq) + published.cache.count }
                    }
                }
            }
        }
        #expect(seen == 1)
    }

    #if DEBUG
        @Test func aLockTakenAgainstTheOrderStopsTheProcess() async throws {
            let result = try await #require(
                processExitsWith: .failure, observing: [\.standardErrorContent],
                performing: {
                    let folder = try TemporaryFolder()
                    let store = try SQLiteLockOrderTests.store(in: folder)
                    // This process stops below, before the folder's deinit: its files go now (still open).
                    try FileManager.default.removeItem(atPath: folder.path)
                    // The append lock inside the published one: an update holding the append lock and
                    // waiting for the published one would wait for this forever.
                    _ = store.withPublished { _ in try? store.appending { _ throws(StoreError) in } }
                })
            #expect(String(decoding: result.standardErrorContent, as: UTF8.self).contains("against the lock order"))
        }
    #endif
}
