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

/// An operator's mistakes with an SQLite store rather than an attacker's: many names for one
/// database file, and two daemons racing for it (docs/design.md, "A store is named by what it
/// is"). Whatever name is used, every acknowledged change is found and one process holds the file.
@Suite(.serialized) struct StoreIdentityAbuseTests {
    typealias Fixture = SQLiteStoreTests.Fixture

    /// Every name below is the same file: symlinks (relative, absolute, chained, through a
    /// symlinked folder), hard links in other folders, `.` and `..` paths.
    static func names(of path: String, in folder: String) throws -> [String] {
        var names = [path]
        try FileManager.default.createDirectory(atPath: "\(folder)/deep/er/still", withIntermediateDirectories: true)
        #expect(symlink(folder, "\(folder)/deep/folder-link") == 0)
        names.append("\(folder)/deep/folder-link/x.db")
        names.append("\(folder)/deep/er/still/../../../x.db")
        names.append("\(folder)/./deep/./../x.db")
        var previous = path
        for index in 0..<40 {
            let name = "\(folder)/deep/er/name\(index).db"
            // A chain of 20: each even symlink names the even one before it (the kernel follows up
            // to 40); each odd one is relative.
            #expect(symlink(index % 2 == 0 ? previous : "../../x.db", name) == 0, "\(name)")
            if index % 2 == 0 { previous = name }
            names.append(name)
        }
        for index in 0..<20 {
            let name = "\(folder)/deep/er/still/hard\(index).db"
            #expect(link(path, name) == 0, "\(name)")
            names.append(name)
            names.append("\(folder)/deep/er/still/../still/hard\(index).db")
        }
        return names
    }

    /// Each of ~90 names of one file opened in turn, a change acknowledged through it and the
    /// store dropped without closing (as by `kill -9`): the next name sees every change, while one
    /// is open every other name is in use, and the only change log is at the file's real path.
    /// Within three minutes: alone it takes under a second, beside the SQLite store's other tests
    /// about 8 s, among the whole suite's parallel tests on two cores 62 s was seen: a minute was a
    /// limit on the machine's load, not on navd.
    @Test(.timeLimit(.minutes(3))) func manyNamesOfOneFileAreOneStore() throws {
        let started = Date()
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let id: String
        var version: Int
        do {
            let fixture = try Fixture(path: path, threshold: 1_000_000)
            let created = try fixture.sessions.create(graph: nil, start: nil, context: [:])
            (id, version) = (created.session.id, created.session.state.version)
            fixture.store.close()
        }
        let names = try Self.names(of: path, in: folder.path)
        let real = try SQLiteStoreIdentityTests.realPath(path)
        for (index, name) in names.enumerated() {
            let fixture = try Fixture(path: name, threshold: 1_000_000)
            #expect(
                try fixture.store.load(id)?.state.version == version, "\(name): a change acknowledged through an earlier name is missing")
            #expect(fixture.store.logPrefix == real, "\(name)")
            version = try fixture.navigate(id, index % 2 == 0 ? SQLiteStoreTests.pathA : SQLiteStoreTests.pathB).session.state.version
            // While it is open, a sample of the other names is refused as in use, never as damage.
            for other in stride(from: index % 13, to: names.count, by: 13) {
                do {
                    _ = try Fixture(path: names[other], threshold: 1_000_000)
                    Issue.record("\(names[other]) opened while \(name) is open")
                } catch let error as StoreError {
                    #expect(error.kind == .inUse && !error.message.contains("restore"), "\(names[other]): \(error)")
                }
            }
            fixture.store.waitForCompaction()
            // A checkpoint (every 64th version) is written on a queue of its own, which holds the
            // store until it is: a process killed meanwhile would lose it and free the file, an
            // object dropped here would hold the file for the next name until the write is done.
            fixture.sessions.checkpoints.flush()
        }
        // One log, at the file's real path; no name left a log of its own.
        let logs = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.contains("-changes-") }
        #expect(logs.allSatisfy { $0.hasPrefix("x.db-changes-") }, "\(logs)")
        let fixture = try Fixture(path: names[names.count / 2], threshold: 1_000_000)
        #expect(try fixture.store.load(id)?.state.version == version)
        #expect(version == names.count + 1)
        fixture.store.close()
        #expect(Date().timeIntervalSince(started) < 180)
    }

    /// A raw request to a daemon on `port`.
    static func request(_ port: Int, _ method: String, _ target: String, token: String? = nil, body: String = "") throws -> HTTPMessage {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        let connection = try HTTPConnection(port: port, timeout: 10)
        try connection.send(Array((head + "\r\n" + body).utf8))
        return try connection.readResponse(method: method)
    }

    /// Rounds of two daemons started at the same moment on one file by two names (a symlink and
    /// a hard link, swapped each round): exactly one serves, the other exits 75 naming the
    /// winner's PID; the winner acknowledges a change and is killed; every change is there at the end.
    @Test(.timeLimit(.minutes(1))) func twoDaemonsRacingForOneFileOneServesTheOtherExits75() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/x.db"
        let session: DaemonHarness.Session
        var version: Int
        do {
            let daemon = try DaemonHarness(store: "sqlite:\(path)")
            session = try daemon.createSession()
            version = try #require(try daemon.view(session)["version"]?.int)
            daemon.crash()
        }
        #expect(symlink(path, "\(folder.path)/link.db") == 0)
        #expect(link(path, "\(folder.path)/hard.db") == 0)
        for round in 0..<4 {
            let names = round % 2 == 0 ? ["link.db", "hard.db"] : ["hard.db", "link.db"]
            var contenders: [(process: ChildProcess, port: Int, log: String)] = []
            for name in names {
                let port = try DaemonHarness.freePort()
                let log = "\(folder.path)/race-\(round)-\(name).log"
                let process = try ChildProcess(
                    DaemonHarness.binary.path,
                    [
                        "serve", "--store", "sqlite:\(folder.path)/\(name)", "--listen", "127.0.0.1:\(port)", "--graph",
                        "Examples/news.json", "--drain", "0"
                    ],
                    environment: DaemonHarness.environment(), directory: DaemonHarness.packageRoot.path, output: .file(log), errors: .output
                )
                contenders.append((process, port, log))
            }
            defer {
                for contender in contenders {
                    contender.process.send(SIGKILL)
                    _ = contender.process.waitUntilExit()
                }
            }
            // The loser exits by itself; the winner keeps running.
            var loser: Int?
            let deadline = Date().addingTimeInterval(15)
            while loser == nil, Date() < deadline {
                loser = contenders.indices.first { !contenders[$0].process.isRunning }
                usleep(10_000)
            }
            let lost = try #require(loser, "round \(round): both daemons run on one file")
            let won = 1 - lost
            let status = contenders[lost].process.wait(seconds: 1).map(CLIProcess.status)
            let said = (try? String(contentsOfFile: contenders[lost].log, encoding: .utf8)) ?? ""
            #expect(status == 75, "round \(round): \(said)")
            #expect(
                said.contains("in use: another navd holds it: PID \(contenders[won].process.processIdentifier)"), "round \(round): \(said)")
            #expect(!said.contains("restore"), "round \(round): \(said)")
            // The winner serves every change acknowledged before, and takes another.
            var view: HTTPMessage?
            while Date() < deadline, contenders[won].process.isRunning {
                if let answer = try? Self.request(contenders[won].port, "GET", "/v1/sessions/\(session.id)", token: session.token),
                    answer.status == 200
                {
                    view = answer
                    break
                }
                usleep(20_000)
            }
            let served = try #require(view, "round \(round): the winner does not serve")
            #expect(try served.json()["version"]?.int == version, "round \(round)")
            let target = round % 2 == 0 ? "^/top/list_news(category=1)/show_news(id=2)" : "^/top"
            let answer = try Self.request(
                contenders[won].port, "POST", "/v1/sessions/\(session.id)/navigate", token: session.token, body: "{\"path\":\"\(target)\"}"
            )
            #expect(answer.status == 200, "\(answer)")
            version = try #require(try answer.json()["version"]?.int)
        }
        let daemon = try DaemonHarness(store: "sqlite:\(path)")
        #expect(try daemon.view(session)["version"]?.int == version)
        #expect(version == 5)
        #expect(try daemon.stop() == 0)
    }
}
