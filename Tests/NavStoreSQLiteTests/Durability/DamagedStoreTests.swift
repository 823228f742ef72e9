import Foundation
import Testing

@testable import NavSessions
@testable import NavStoreSQLite
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A damaged SQLite store against the real binary: `navd serve` refuses to start and says where
/// the damage is, `navd store check` reports it, `navd store repair --accept-loss` folds what is
/// valid and says what was lost, and then the daemon starts.
@Suite(.serialized) struct DamagedStoreTests {
    static let pathA = "^/top/list_news(category=1)/show_news(id=2)"
    static let pathB = "^/top"

    @Test func aDamagedChangeLogStopsTheDaemonUntilTheLossIsAcceptedAndADamagedDatabaseStopsItToo() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let store = "sqlite:\(path)"
        var sessions: [DaemonHarness.Session] = []
        var versions: [String: Int] = [:]
        do {
            let daemon = try DaemonHarness(store: store)
            for index in 0..<3 {
                sessions.append(
                    try daemon.createSession(context: ["user": .string("u\(index)"), "note": .string(String(repeating: "n", count: 400))]))
            }
            for step in 0..<30 {
                let session = sessions[step % 3]
                let answer = try daemon.navigate(session, (step / 3) % 2 == 0 ? Self.pathA : Self.pathB)
                try #require(answer.status == 200)
                versions[session.id] = try answer.json()["version"]?.int
            }
            // Killed: the changes stay in the change log, to be folded in at the next start.
            daemon.crash()
        }
        let scan = try #require(try ChangeLog.scan(prefix: path).last { !$0.records.isEmpty })
        try #require(scan.records.count == 30)
        let damaged = scan.offsets[14]
        let victim = scan.records[14]
        var bytes = try #require(FileManager.default.contents(atPath: scan.path))
        bytes[damaged + 60] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: scan.path))

        let refused = try TestFixtures.serveFails(store)
        #expect(refused.errors.contains("\(scan.path) at byte offset \(damaged)"), "\(refused.errors)")
        #expect(refused.errors.contains("navd store repair --store \(store) --accept-loss"), "\(refused.errors)")
        #expect(FileManager.default.contents(atPath: scan.path) == bytes, "the damaged file is kept")

        let check = try CLIProcess.navd(["store", "check", "--store", store])
        #expect(check.status == 1, "\(check.output) \(check.errors)")
        #expect(check.output.contains("DAMAGE: \(scan.path) at byte offset \(damaged)"), "\(check.output)")
        let unaccepted = try CLIProcess.navd(["store", "repair", "--store", store])
        #expect(unaccepted.status != 0)
        #expect(unaccepted.errors.contains("--accept-loss"), "\(unaccepted.errors)")
        #expect(FileManager.default.fileExists(atPath: scan.path))

        let repair = try CLIProcess.navd(["store", "repair", "--store", store, "--accept-loss"])
        #expect(repair.status == 0, "\(repair.output) \(repair.errors)")
        #expect(repair.output.contains("change seq \(victim.seq) is missing"), "\(repair.output)")
        #expect(repair.output.contains("session \(victim.sessionID): kept at version \(victim.version - 1)"), "\(repair.output)")
        #expect(FileManager.default.fileExists(atPath: scan.path + ".damaged"))
        #expect(try CLIProcess.navd(["store", "check", "--store", store]).status == 0)

        do {
            let daemon = try DaemonHarness(store: store)
            for session in sessions {
                let version = try daemon.view(session)["version"]?.int
                #expect(version == (session.id == victim.sessionID ? Int(victim.version) - 1 : versions[session.id]))
            }
            // More sessions, so that the middle of the database is a page in use.
            // (graph named: after a restart the default graph is not set again — a separate defect.)
            for _ in 0..<150 { _ = try daemon.createSession(graph: "news", context: ["note": .string(String(repeating: "m", count: 400))]) }
            #expect(try daemon.stop() == 0)
        }

        // 4 KiB of garbage in the middle of the database.
        var database = try #require(FileManager.default.contents(atPath: path))
        let middle = database.count / 2 / 4096 * 4096
        var generator = SplitMix64(seed: 11)
        for index in middle..<middle + 4096 { database[index] = UInt8(truncatingIfNeeded: generator.next()) }
        try database.write(to: URL(fileURLWithPath: path))
        let refusedDatabase = try TestFixtures.serveFails(store)
        #expect(refusedDatabase.errors.contains("the database \(path) cannot be used"), "\(refusedDatabase.errors)")
        #expect(try CLIProcess.navd(["store", "check", "--store", store]).status == 1)
    }
}
