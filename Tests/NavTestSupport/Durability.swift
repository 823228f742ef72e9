import Foundation
import NavCore
import NavJSON
import Synchronization
import Testing

@testable import NavSessions

struct Ack: Sendable {
    var session: String
    var version: Int
    var path: String
    var intent: String
    var events: [JSON]
}

/// Sends navigations one at a time on a thread until the daemon goes away, recording each acknowledgement.
final class TransitionDriver: @unchecked Sendable {
    struct Acknowledgement: Sendable {
        var session: String
        var version: Int
        var path: String
    }

    private let daemon: DaemonHarness
    private let sessions: [DaemonHarness.Session]
    private let paths: [String]
    private let acks = Locked<[Acknowledgement]>([])
    private let done = DispatchSemaphore(value: 0)

    init(daemon: DaemonHarness, sessions: [DaemonHarness.Session], paths: [String]) {
        self.daemon = daemon
        self.sessions = sessions
        self.paths = paths
    }

    func start() {
        Thread { [self] in
            var step = 0
            while true {
                let session = sessions[step % sessions.count]
                let path = paths[(step / sessions.count) % paths.count]
                step += 1
                guard let answer = try? daemon.send("POST", session.url + "/navigate", json: ["path": .string(path)], token: session.token)
                else { break }
                guard answer.status == 200, let body = try? answer.json(), let version = body["version"]?.int,
                    let reached = body["path"]?.string
                else { break }
                acks.withLock { $0.append(Acknowledgement(session: session.id, version: version, path: reached)) }
            }
            done.signal()
        }.start()
    }

    /// Waits until `count` transitions have been acknowledged (or `seconds` have passed).
    func wait(forAcknowledgements count: Int, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while acks.withLock({ $0.count }) < count, Date() < deadline { usleep(10_000) }
    }

    func finish() -> [Acknowledgement] {
        done.wait()
        return acks.withLock { $0 }
    }
}

/// A folder under /tmp removed when the value goes away.
final class TemporaryFolder {
    let path: String

    init() throws {
        path = "/tmp/navd-test-\(UUID().uuidString.prefix(12))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

enum Shell {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func python(_ script: String) throws {
        let child = try ChildProcess("/usr/bin/env", ["python3", "-c", script], errors: .pipe)
        let data = child.errors?.readDataToEndOfFile() ?? Data()
        guard child.waitUntilExit() == .exited(0) else { throw Failure(description: String(decoding: data, as: UTF8.self)) }
    }
}
