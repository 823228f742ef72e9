import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A running daemon whose disk fills up: a small tmpfs, mounted by the test (it needs root and a
/// kernel that lets it mount; it is skipped, saying so, where it cannot). Writes get 503
/// `store_unavailable` with `Retry-After`, `/readyz` turns 503, reads go on; once there is room
/// again navd recovers by itself, and nothing acknowledged is lost.
@Suite(.serialized) struct FullDiskTests {
    static let pathA = "^/top/list_news(category=1)/show_news(id=2)"
    static let pathB = "^/top"

    /// A tmpfs of `size` mounted on a new folder, unmounted and removed by `unmount()`.
    final class Tmpfs {
        let path: String

        init(size: String) throws {
            path = "/tmp/navd-tmpfs-\(UUID().uuidString.prefix(12))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) == 0 else {
                try? FileManager.default.removeItem(atPath: path)
                throw DaemonHarness.StartFailure(description: "cannot mount a tmpfs on \(path)")
            }
        }

        func unmount() {
            _ = Self.run("/bin/umount", [path])
            try? FileManager.default.removeItem(atPath: path)
        }

        static func run(_ tool: String, _ arguments: [String]) -> Int32 {
            guard let child = try? ChildProcess(tool, arguments) else { return -1 }
            return CLIProcess.status(child.waitUntilExit())
        }

        /// Whether this environment can mount one (root, and a kernel or container that allows it).
        static let available: Bool = {
            guard getuid() == 0, let probe = try? Tmpfs(size: "1m") else { return false }
            probe.unmount()
            return true
        }()

        /// Writes a file until the file system is full. - Returns: its path.
        func fill() -> String {
            let filler = path + "/filler"
            let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            defer { close(descriptor) }
            let chunk = [UInt8](repeating: 0x55, count: 4096)
            while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            return filler
        }
    }

    @Test(.enabled(if: Tmpfs.available, "skipped: mounting a tmpfs needs root and a kernel that allows it here"))
    func aFullDiskAnswers503AndNavdRecoversWithoutARestart() throws {
        let disk = try Tmpfs(size: "8m")
        defer { disk.unmount() }
        let store = "sqlite:\(disk.path)/navd.db"
        var acknowledged: [String: (version: Int, path: String)] = [:]
        var sessions: [DaemonHarness.Session] = []
        do {
            let daemon = try DaemonHarness(store: store)
            for _ in 0..<3 { sessions.append(try daemon.createSession()) }
            for session in sessions {
                let answer = try daemon.navigate(session, Self.pathA).json()
                acknowledged[session.id] = (answer["version"]?.int ?? 0, answer["path"]?.string ?? "")
            }
            let filler = disk.fill()

            // The last page of the change log may still have room for a record or two.
            var refused: HTTPMessage?
            for step in 0..<40 {
                let session = sessions[step % 3]
                let target = step / 3 % 2 == 0 ? Self.pathB : Self.pathA
                let answer = try daemon.navigate(session, target)
                if answer.status == 503 {
                    refused = answer
                    break
                }
                try #require(answer.status == 200, "\(answer)")
                let view = try answer.json()
                acknowledged[session.id] = (view["version"]?.int ?? 0, view["path"]?.string ?? "")
            }
            let answer = try #require(refused, "no write was refused on a full disk")
            #expect(answer.code == "store_unavailable")
            #expect(answer.headers["retry-after"] == "1")
            // Reads go on, and show the last acknowledged change, not the refused one.
            for session in sessions {
                let view = try daemon.view(session)
                #expect(view["version"]?.int == acknowledged[session.id]?.version)
                #expect(view["path"]?.string == acknowledged[session.id]?.path)
            }
            let ready = try daemon.request("GET", "/readyz")
            #expect(ready.status == 503)
            #expect(try ready.json()["status"]?.string == "store_unavailable")

            // Room again: navd notices by itself (readiness probes about once a second).
            try FileManager.default.removeItem(atPath: filler)
            let deadline = Date().addingTimeInterval(10)
            var recovered = false
            while Date() < deadline, !recovered {
                recovered = try daemon.request("GET", "/readyz").status == 200
                if !recovered { usleep(200_000) }
            }
            #expect(recovered, "/readyz did not turn 200 once the disk had room: \(daemon.log.suffix(1000))")
            for session in sessions {
                let before = acknowledged[session.id]
                let target = before?.path == "/top" ? Self.pathA : Self.pathB
                let answer = try daemon.navigate(session, target)
                try #require(answer.status == 200, "\(answer)")
                let view = try answer.json()
                #expect(view["version"]?.int == (before?.version ?? 0) + 1, "versions stay gapless")
                acknowledged[session.id] = (view["version"]?.int ?? 0, view["path"]?.string ?? "")
            }
            #expect(daemon.log.contains("store unavailable"))
            #expect(try daemon.stop() == 0)
        }
        // Nothing acknowledged was lost.
        let restarted = try DaemonHarness(store: store)
        for session in sessions {
            let view = try restarted.view(session)
            #expect(view["version"]?.int == acknowledged[session.id]?.version)
            #expect(view["path"]?.string == acknowledged[session.id]?.path)
            let events = try restarted.events(session, limit: 1000).json()["events"]?.array ?? []
            let seqs = events.compactMap { $0["seq"]?.int }
            #expect(seqs == Array(1...max(1, seqs.count)), "gapless events")
        }
        #expect(try restarted.stop() == 0)
    }

    /// A disk that is full when navd starts on a new database is named, with the system's reason,
    /// and is not called damage: there is nothing to restore, only room to make. (On an existing
    /// database navd starts, and writes answer 503 until there is room, as above.)
    @Test(.enabled(if: Tmpfs.available, "skipped: mounting a tmpfs needs root and a kernel that allows it here"))
    func aFullDiskAtStartUpIsNamedWithItsReasonAndNotCalledDamage() throws {
        let disk = try Tmpfs(size: "1m")
        defer { disk.unmount() }
        _ = disk.fill()
        let path = "\(disk.path)/new.db"
        let refused = try TestFixtures.serveFails("sqlite:\(path)")
        #expect(refused.status == 1, "\(refused.errors)")
        #expect(refused.errors.contains("the database \(path) cannot be opened or written"), "\(refused.errors)")
        #expect(refused.errors.contains("No space left on device"), "\(refused.errors)")
        #expect(!refused.errors.contains("restore"), "\(refused.errors)")
    }
}
