import Foundation
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One SQLite database file reached by several names (a symlink, a hard link, a `..` path) is one
/// store: every name finds the same change log and the same lock, against the real binary killed
/// with `kill -9` (docs/design.md, "A store is named by what it is"). A database another navd
/// holds is *in use* (exit 75, naming its PID), never *damaged*.
@Suite(.serialized) struct StoreIdentityTests {
    static let pathA = "^/top/list_news(category=1)/show_news(id=2)"
    static let pathB = "^/top"

    /// Navigates `session` `count` times, alternating between two paths; the last version acknowledged.
    static func navigate(_ daemon: DaemonHarness, _ session: DaemonHarness.Session, times count: Int, from start: Int = 0) throws -> Int {
        var version = 0
        for step in start..<start + count {
            let answer = try daemon.navigate(session, step % 2 == 0 ? pathA : pathB)
            try #require(answer.status == 200, "\(answer)")
            version = try #require(try answer.json()["version"]?.int)
        }
        return version
    }

    /// A session reached through `first` to version 4 and killed; through `second` every
    /// acknowledged change is there, and one more acknowledged there is still there through `first`.
    static func checkSameStore(first: String, second: String) throws {
        let session: DaemonHarness.Session
        do {
            let daemon = try DaemonHarness(store: "sqlite:\(first)")
            session = try daemon.createSession()
            #expect(try navigate(daemon, session, times: 3) == 4)
            daemon.crash()
        }
        do {
            let daemon = try DaemonHarness(store: "sqlite:\(second)")
            #expect(try daemon.view(session)["version"]?.int == 4, "every change acknowledged through \(first) is there through \(second)")
            #expect(try navigate(daemon, session, times: 1, from: 3) == 5)
            daemon.crash()
        }
        let daemon = try DaemonHarness(store: "sqlite:\(first)")
        #expect(try daemon.view(session)["version"]?.int == 5, "the change acknowledged through \(second) is there through \(first)")
        #expect(try navigate(daemon, session, times: 1, from: 4) == 6)
        #expect(try daemon.stop() == 0)
    }

    @Test func aCrashedStoreReopenedThroughASymlinkHasEveryAcknowledgedChange() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let link = "\(folder.path)/link.db"
        // The link may name the file before it exists: the database is created through it.
        #expect(symlink("x.db", link) == 0)
        try Self.checkSameStore(first: path, second: link)
        try Self.checkSameStore(first: link, second: path)
    }

    @Test func aHardLinkAndADotDotPathAreTheSameStore() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: "\(folder.path)/a/sub", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(folder.path)/b", withIntermediateDirectories: true)
        let path = "\(folder.path)/a/x.db"
        // A hard link needs the file: a store created and closed first.
        do {
            let daemon = try DaemonHarness(store: "sqlite:\(path)")
            #expect(try daemon.stop() == 0)
        }
        #expect(link(path, "\(folder.path)/b/hard.db") == 0)
        try Self.checkSameStore(first: path, second: "\(folder.path)/b/hard.db")
        try Self.checkSameStore(first: "\(folder.path)/b/hard.db", second: "\(folder.path)/a/sub/../x.db")
    }

    @Test func aSecondNavdThroughASymlinkOrAHardLinkExits75NamingThePID() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let daemon = try DaemonHarness(store: "sqlite:\(path)")
        let session = try daemon.createSession()
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        #expect(link(path, "\(folder.path)/hard.db") == 0)
        for name in ["link.db", "hard.db", "x.db"] {
            let refused = try TestFixtures.serveFails("sqlite:\(folder.path)/\(name)")
            #expect(refused.status == 75, "\(name): \(refused.errors)")
            #expect(refused.errors.contains("in use"), "\(name): \(refused.errors)")
            #expect(refused.errors.contains("another navd holds it: PID \(daemon.processIdentifier)"), "\(name): \(refused.errors)")
            #expect(!refused.errors.contains("restore") && !refused.errors.contains("damage"), "\(name): \(refused.errors)")
        }
        // The running daemon was not disturbed.
        #expect(try Self.navigate(daemon, session, times: 1) == 2)
        #expect(try daemon.stop() == 0)
    }

    @Test func storeCheckAndRepairRefuseADatabaseInUse() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let daemon = try DaemonHarness(store: "sqlite:\(path)")
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        for name in ["x.db", "link.db"] {
            let check = try CLIProcess.navd(["store", "check", "--store", "sqlite:\(folder.path)/\(name)"])
            #expect(check.status == 75, "\(check)")
            #expect(check.errors.contains("in use") && check.errors.contains("PID \(daemon.processIdentifier)"), "\(check)")
            #expect(!check.output.contains("DAMAGED") && !check.errors.contains("DAMAGED"), "\(check)")
            let repair = try CLIProcess.navd(["store", "repair", "--accept-loss", "--store", "sqlite:\(folder.path)/\(name)"])
            #expect(repair.status == 75, "\(repair)")
            #expect(repair.errors.contains("in use"), "\(repair)")
        }
        #expect(try daemon.stop() == 0)
        let check = try CLIProcess.navd(["store", "check", "--store", "sqlite:\(folder.path)/link.db"])
        #expect(check.status == 0, "\(check)")
    }

    /// A process that holds the database through SQLite's own lock only (as a navd that took no
    /// lock on the file itself does, or the `sqlite3` shell in a transaction) makes the database
    /// in use too, naming that process (`F_GETLK`), not damaged; `store check` says so as well.
    @Test func aDatabaseLockedBySQLiteAloneIsInUseNotDamaged() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        do {
            let daemon = try DaemonHarness(store: "sqlite:\(path)")
            #expect(try daemon.stop() == 0)
        }
        let holder = try SQLiteConnection(path: path)
        defer { holder.close() }
        try holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        try holder.execute("BEGIN EXCLUSIVE")
        defer { try? holder.execute("ROLLBACK") }
        let refused = try TestFixtures.serveFails("sqlite:\(path)")
        #expect(refused.status == 75, "\(refused.errors)")
        #expect(refused.errors.contains("is in use: another navd holds it: PID \(getpid())"), "\(refused.errors)")
        #expect(!refused.errors.contains("restore") && !refused.errors.contains("damage"), "\(refused.errors)")
        let check = try CLIProcess.navd(["store", "check", "--store", "sqlite:\(path)"])
        #expect(check.status == 75, "\(check)")
        #expect(check.errors.contains("in use") && !check.output.contains("DAMAGED"), "\(check)")
    }
}
