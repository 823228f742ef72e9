import Foundation
import NavCore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs the real `navd` binary (`.build/debug/navd`, built by `swift build --build-tests`)
/// on a free loopback port and talks to it over sockets: the ``Transport/process`` transport,
/// for tests that need a process. Every answer goes through the ``OpenAPIValidator``; a
/// violation is recorded as an `Issue` at the caller's line.
final class DaemonHarness: NavdHarness, @unchecked Sendable {
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The package root, from this file's place in `Tests/NavTestSupport/`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `navd` executable: next to the test bundle (the build's bin directory), else
    /// `.build/debug/navd`, or `NAVD_BINARY` when set.
    static let binary: URL = {
        if let explicit = ProcessInfo.processInfo.environment["NAVD_BINARY"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("navd")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/navd")
    }()

    /// The navd the current suite shares (see ``SharedDaemon``), on whichever transport.
    @TaskLocal static var current: (any NavdHarness)?

    /// The shared navd of the running suite.
    static func shared(sourceLocation: SourceLocation = #_sourceLocation) throws -> any NavdHarness {
        try #require(current, "the suite needs the .sharedDaemon trait", sourceLocation: sourceLocation)
    }

    let port: Int
    let options: HarnessOptions
    let logFile: URL
    private let process: ChildProcess
    /// The daemon's process id (to read its memory from `/proc`).
    var processIdentifier: Int32 { process.processIdentifier }
    let validator: OpenAPIValidator?
    var transport: Transport { .process }
    private let lock = NSLock()
    private var exitStatus: Int32?

    private init(port: Int, options: HarnessOptions, process: ChildProcess, logFile: URL, validator: OpenAPIValidator?) {
        self.port = port
        self.options = options
        self.process = process
        self.logFile = logFile
        self.validator = validator
    }

    convenience init(graphs: [String] = ["Examples/news.json"], store: String = "memory", arguments: [String] = []) throws {
        try self.init(HarnessOptions(graphs: graphs, store: store, arguments: arguments))
    }

    /// Starts `navd serve` and waits (up to 10 s) until `/healthz` answers 200.
    convenience init(_ options: HarnessOptions) throws {
        var lastFailure = "not started"
        for _ in 0..<3 {
            let port = try Self.freePort()
            let logFile = FileManager.default.temporaryDirectory.appendingPathComponent(
                "navd-test-\(port)-\(UUID().uuidString.prefix(8)).log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let arguments =
                ["serve", "--listen", "127.0.0.1:\(port)", "--store", options.store]
                + options.graphs.flatMap { ["--graph", Self.packageRoot.appendingPathComponent($0).path] }
                // No drain window unless a test asks for one: every test stops its daemon.
                + (options.arguments.contains("--drain") ? [] : ["--drain", "0"])
                + options.arguments
            let process: ChildProcess
            do {
                // One descriptor for both streams, so their writes share one file offset.
                process = try ChildProcess(
                    Self.binary.path, arguments, environment: Self.environment(), directory: Self.packageRoot.path,
                    output: .file(logFile.path), errors: .output
                )
            } catch {
                throw StartFailure(description: "\(error) (run `swift build` first)")
            }
            if Self.waitUntilHealthy(port: port, process: process, logFile: options.arguments.contains("--log-level") ? nil : logFile) {
                self.init(port: port, options: options, process: process, logFile: logFile, validator: try? OpenAPIValidator.shared.get())
                return
            }
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            lastFailure = "navd \(arguments.joined(separator: " ")) did not become healthy: \(log.suffix(2000))"
            process.send(SIGKILL)
            _ = process.waitUntilExit()
            try? FileManager.default.removeItem(at: logFile)
            if !log.contains("in use") { break }
        }
        throw StartFailure(description: lastFailure)
    }

    /// Stops a daemon the test did not stop itself, with SIGTERM as ``stop()`` does, and
    /// records an issue unless it drains and exits 0.
    deinit {
        if exitStatus == nil {
            do {
                let status = try stop()
                if status != 0 { Issue.record("navd on port \(port) exited with status \(status): \(log.suffix(2000))") }
            } catch {
                Issue.record("\(error)")
            }
        }
        if process.isRunning { kill() }
        try? FileManager.default.removeItem(at: logFile)
    }

    /// The environment a spawned navd gets: the tests' own without `NAVD_*`, so that a setting
    /// exported in the shell running the tests does not change what they test.
    static func environment(adding extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVD_") }.merging(extra) { $1 }
    }

    /// What the daemon wrote to stdout and stderr.
    var log: String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    var isRunning: Bool { process.isRunning }

    /// A port nothing listens on now: bind port 0, read it, close.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StartFailure(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw StartFailure(description: "cannot bind a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sends SIGTERM and waits up to 10 s. - Returns: the exit status (0 for a clean drain).
    /// - Throws: when the daemon did not exit in time or died of a signal.
    @discardableResult
    func stop() throws -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        process.send(SIGTERM)
        guard let termination = process.wait(seconds: 10) else {
            process.send(SIGKILL)
            throw StartFailure(description: "navd did not exit within 10 s of SIGTERM; log: \(log.suffix(2000))")
        }
        guard case .exited(let status) = termination else {
            throw StartFailure(description: "navd died of \(termination); log: \(log.suffix(4000))")
        }
        exitStatus = status
        return status
    }

    /// Sends `signal` (SIGTERM, say) and returns at once; ``stop()`` then waits for the exit.
    func send(_ signal: Int32) {
        process.send(signal)
    }

    /// Polls `GET /healthz` until it answers 200 (true), the process exits, or 10 s pass.
    ///
    /// - Parameter logFile: when given, answers count only once the process has logged that it is
    ///   listening: between `freePort()` and the bind, another daemon (of a test running in
    ///   parallel) may take the port, and its answers must not pass for this one's.
    private static func waitUntilHealthy(port: Int, process: ChildProcess, logFile: URL?) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if let logFile, (try? String(contentsOf: logFile, encoding: .utf8))?.contains("navd listening") != true {
                usleep(20_000)
                continue
            }
            if let connection = try? HTTPConnection(port: port, timeout: 2),
                (try? connection.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))) != nil,
                let answer = try? connection.readResponse(), answer.status == 200
            {
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// Kills the daemon with SIGKILL, as a crash or `kill -9` would (no drain), and waits
    /// until it is gone; a later ``stop()`` returns -9.
    func crash() {
        lock.lock()
        defer { lock.unlock() }
        kill()
        if exitStatus == nil { exitStatus = -SIGKILL }
    }

    private func kill() {
        process.send(SIGKILL)
        _ = process.wait(seconds: 5)
    }

    // MARK: HTTP

    /// Sends the request on a new connection and reads the answer.
    func exchange(_ method: String, _ target: String, fields: [(name: String, value: String)], body: [UInt8]) throws -> HTTPMessage {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let connection = try HTTPConnection(port: port)
        try connection.send(Array(head.utf8) + body)
        return try connection.readResponse(method: method)
    }

    /// Sends raw bytes as they are and reads one answer (validated when `validate`).
    func raw(
        _ bytes: [UInt8], method: String = "GET", target: String = "/", validate: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        let connection = try HTTPConnection(port: port)
        try connection.send(bytes)
        let answer = try connection.readResponse(method: method)
        if validate { check(answer, method: method, target: target, sourceLocation: sourceLocation) }
        return answer
    }
}
