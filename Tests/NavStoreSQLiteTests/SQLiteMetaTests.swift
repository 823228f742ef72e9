import Foundation
import NavSessions
import Testing

@testable import NavCLI
@testable import NavStoreSQLite
@testable import NavTestSupport

/// The SQLite store's meta values on `store_meta`, whose value column is declared INTEGER: text
/// that looks like a number reads back as written, and values outlive a reopening.
@Suite struct SQLiteMetaTests {
    static func withFolder(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("navd-meta-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder.path + "/navd.db")
    }

    static func open(_ path: String) throws -> SQLiteStore {
        try SQLiteStore(path: path, decode: StoreFactory.snapshotDecoder(GraphRegistry()))
    }

    @Test func metaValuesAreComparedAndSet() throws {
        try Self.withFolder { path in
            let store = try Self.open(path)
            defer { store.close() }
            try MetaStoreContract.check(store)
        }
    }

    @Test func metaValuesOutliveAReopening() throws {
        try Self.withFolder { path in
            let store = try Self.open(path)
            #expect(try store.replaceMetaValue("webhook:orders", with: "120", ifCurrent: nil))
            store.close()
            let reopened = try Self.open(path)
            defer { reopened.close() }
            #expect(try reopened.metaValue("webhook:orders") == "120")
            #expect(try reopened.replaceMetaValue("webhook:orders", with: "121", ifCurrent: "120"))
        }
    }
}
