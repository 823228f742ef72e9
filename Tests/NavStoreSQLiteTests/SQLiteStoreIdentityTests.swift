import Foundation
import NavCore
import NavJSON
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite store's side files follow the database file, not the name it was opened by: the
/// database records where its change log lives, and the lock is on the file itself
/// (docs/design.md, "A store is named by what it is").
@Suite struct SQLiteStoreIdentityTests {
    typealias Fixture = SQLiteStoreTests.Fixture

    /// `store_meta`'s value for `key`, as text, or nil.
    static func meta(_ key: String, at path: String) throws -> String? {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        let statement = try connection.statement("SELECT value FROM store_meta WHERE key = ?").bind(1, key)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    static func realPath(_ path: String) throws -> String {
        let resolved = try #require(realpath(path, nil))
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A session created and navigated `count` times through `path`, then dropped without
    /// `close()` (as by `kill -9`): its changes are only in the change log.
    static func crashedSession(at path: String, navigations count: Int) throws -> (id: String, version: Int) {
        let fixture = try Fixture(path: path, threshold: 1000)
        let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
        var version = created.session.state.version
        for step in 0..<count {
            version = try fixture.navigate(created.session.id, step % 2 == 0 ? SQLiteStoreTests.pathA : SQLiteStoreTests.pathB).session
                .state.version
        }
        fixture.store.waitForCompaction()
        return (created.session.id, version)
    }

    @Test func aNewDatabaseRecordsItsChangeLogByTheFilesRealPath() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        #expect(symlink("x.db", "\(folder.path)/link.db") == 0)
        let fixture = try Fixture(path: "\(folder.path)/link.db", threshold: 1000)
        #expect(fixture.store.logPrefix == (try Self.realPath(path)))
        fixture.store.close()
        #expect(try Self.meta("log_prefix", at: path) == (try Self.realPath(path)))
    }

    @Test func aSymlinkAHardLinkAndADotDotPathFindTheSameChangeLog() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: "\(folder.path)/a/sub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(folder.path)/b", withIntermediateDirectories: true)
        let path = "\(folder.path)/a/x.db"
        let crashed = try Self.crashedSession(at: path, navigations: 3)
        #expect(symlink(path, "\(folder.path)/b/link.db") == 0)
        #expect(link(path, "\(folder.path)/b/hard.db") == 0)
        var version = crashed.version
        for name in ["\(folder.path)/b/link.db", "\(folder.path)/b/hard.db", "\(folder.path)/a/sub/../x.db"] {
            let fixture = try Fixture(path: name, threshold: 1000)
            #expect(try fixture.store.load(crashed.id)?.state.version == version, "\(name)")
            version = try fixture.navigate(crashed.id, version % 2 == 0 ? SQLiteStoreTests.pathB : SQLiteStoreTests.pathA).session.state
                .version
            fixture.store.waitForCompaction()
        }
        #expect(version == crashed.version + 3)
        #expect(ChangeLog.files(prefix: "\(folder.path)/b/link.db").isEmpty && ChangeLog.files(prefix: "\(folder.path)/b/hard.db").isEmpty)
        let fixture = try Fixture(path: path, threshold: 1000)
        #expect(try fixture.store.load(crashed.id)?.state.version == version)
        fixture.store.close()
    }

    @Test func aSecondOpeningThroughAnotherNameIsInUseNamingThisProcess() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let fixture = try Fixture(path: path, threshold: 1000)
        defer { fixture.store.close() }
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        #expect(link(path, "\(folder.path)/hard.db") == 0)
        for name in ["x.db", "link.db", "hard.db"] {
            do {
                _ = try Fixture(path: "\(folder.path)/\(name)", threshold: 1000)
                Issue.record("\(name) opened twice")
            } catch let error as StoreError {
                #expect(error.kind == .inUse, "\(name): \(error)")
                #expect(error.message.contains("another navd holds it: PID \(getpid())"), "\(name): \(error)")
                #expect(!error.message.contains("restore"), "\(name): \(error)")
            }
            #expect(throws: StoreError.self) { try SQLiteStore.inspect(path: "\(folder.path)/\(name)") }
        }
    }

    /// A file of the current schema written before the log's location was recorded, with a crash's
    /// change log next to it, opened through a symlink: the log next to the file is folded in and
    /// its location recorded.
    @Test func anOlderFileGetsItsLogLocationRecordedAtStartUp() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let crashed = try Self.crashedSession(at: path, navigations: 3)
        try SQLiteSchemaTests.execute("DELETE FROM store_meta WHERE key <> 'compacted_seq'", at: path)
        #expect(try Self.meta("log_prefix", at: path) == nil)
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        let fixture = try Fixture(path: "\(folder.path)/link.db", threshold: 1000)
        #expect(try fixture.store.load(crashed.id)?.state.version == crashed.version)
        fixture.store.close()
        #expect(try Self.meta("log_prefix", at: path) == (try Self.realPath(path)))
    }

    /// An older file whose log was written under a symlink's name, and another under the file's
    /// own name: which one holds what cannot be told, so start-up refuses, naming both.
    @Test func anOlderFileWithLogsUnderTwoNamesIsRefused() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        _ = try Self.crashedSession(at: path, navigations: 3)
        try SQLiteSchemaTests.execute("DELETE FROM store_meta WHERE key <> 'compacted_seq'", at: path)
        for (_, file) in ChangeLog.files(prefix: path) {
            try FileManager.default.copyItem(atPath: file, toPath: "\(folder.path)/link.db" + file.dropFirst(path.count))
        }
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        do {
            _ = try Fixture(path: "\(folder.path)/link.db", threshold: 1000)
            Issue.record("opened")
        } catch let error as StoreError {
            #expect(error.message.contains("\(folder.path)/link.db-changes-000001"), "\(error)")
            #expect(error.message.contains("\(try Self.realPath(path))-changes-000001"), "\(error)")
        }
    }

    /// A log found under another name than the one the database records is not ignored.
    @Test func aChangeLogFoundElsewhereThanRecordedIsRefused() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        _ = try Self.crashedSession(at: path, navigations: 3)
        for (_, file) in ChangeLog.files(prefix: path) {
            try FileManager.default.moveItem(atPath: file, toPath: "\(folder.path)/link.db" + file.dropFirst(path.count))
        }
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        do {
            _ = try Fixture(path: "\(folder.path)/link.db", threshold: 1000)
            Issue.record("opened, ignoring the log under link.db")
        } catch let error as StoreError {
            #expect(error.message.contains("\(folder.path)/link.db-changes-000001"), "\(error)")
            #expect(error.message.contains("records its change log at \(try Self.realPath(path))-changes-"), "\(error)")
        }
        let check = try SQLiteStore.inspect(path: "\(folder.path)/link.db")
        #expect(check.damaged)
        #expect(check.lines.contains { $0.contains("\(folder.path)/link.db-changes-000001") }, "\(check.lines)")
    }

    /// The database moved away from its recorded log's folder (a hard link kept, the folder
    /// removed): start-up refuses, naming the folder and the system's reason; a repair that
    /// accepts the loss records the log next to the file.
    @Test func aRecordedLogThatCannotBeReachedIsRefusedUntilRepaired() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: "\(folder.path)/a", withIntermediateDirectories: true)
        let path = "\(folder.path)/a/x.db"
        let created: String
        do {
            let fixture = try Fixture(path: path, threshold: 1000)
            created = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            fixture.store.close()
        }
        let moved = "\(folder.path)/x.db"
        #expect(link(path, moved) == 0)
        try FileManager.default.removeItem(atPath: "\(folder.path)/a")
        do {
            _ = try Fixture(path: moved, threshold: 1000)
            Issue.record("opened")
        } catch let error as StoreError {
            #expect(error.message.contains("\(try Self.realPath(folder.path))/a cannot be reached: No such file or directory"), "\(error)")
        }
        let repaired = try Fixture(path: moved, threshold: 1000, acceptingLoss: true)
        let movedReal = try Self.realPath(moved)
        #expect(repaired.store.recoveryReport.contains { $0.contains("\(movedReal)-changes-") }, "\(repaired.store.recoveryReport)")
        repaired.store.close()
        let fixture = try Fixture(path: moved, threshold: 1000)
        #expect(try fixture.store.load(created) != nil)
        fixture.store.close()
    }

    /// A copy of the database file is another store: it records a log of its own, and both run at once.
    @Test func aCopyOfTheFileIsAnotherStoreWithALogOfItsOwn() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let created: String
        do {
            let fixture = try Fixture(path: path, threshold: 1000)
            created = try fixture.sessions.create(graph: nil, start: nil, context: [:]).session.id
            fixture.store.close()
        }
        try FileManager.default.copyItem(atPath: path, toPath: "\(folder.path)/y.db")
        let original = try Fixture(path: path, threshold: 1000)
        let copy = try Fixture(path: "\(folder.path)/y.db", threshold: 1000)
        #expect(copy.store.logPrefix == (try Self.realPath("\(folder.path)/y.db")))
        #expect(try copy.navigate(created, SQLiteStoreTests.pathA).session.state.version == 2)
        #expect(try original.store.load(created)?.state.version == 1)
        copy.store.close()
        original.store.close()
    }
}
