import Foundation
import NavCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the real `navd` binary (`.build/debug/navd`, built by `swift build --build-tests`)
/// on a free loopback port and talks to it over sockets. Every answer goes through the
/// ``OpenAPIValidator``; a violation is recorded as an `Issue` at the caller's line.
final class DaemonHarness: @unchecked Sendable {
    /// How to start a daemon.
    struct Options: Sendable {
        /// Graph files, relative to the package root.
        var graphs: [String] = ["Examples/news.json"]
        var store: String = "memory"
        /// More `navd serve` options, e.g. `["--admin-token", "…"]`.
        var arguments: [String] = []
    }

    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The package root, from this file's place in `Tests/navdTests/Support/`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

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

    /// The daemon the current suite shares (see ``SharedDaemon``).
    @TaskLocal static var current: DaemonHarness?

    /// The shared daemon of the running suite.
    static func shared(sourceLocation: SourceLocation = #_sourceLocation) throws -> DaemonHarness {
        try #require(current, "the suite needs the .sharedDaemon trait", sourceLocation: sourceLocation)
    }

    let port: Int
    let options: Options
    let logFile: URL
    private let process: Process
    /// The daemon's process id (to read its memory from `/proc`).
    var processIdentifier: Int32 { process.processIdentifier }
    private let validator: OpenAPIValidator?
    private let lock = NSLock()
    private var exitStatus: Int32?

    private init(port: Int, options: Options, process: Process, logFile: URL, validator: OpenAPIValidator?) {
        self.port = port
        self.options = options
        self.process = process
        self.logFile = logFile
        self.validator = validator
    }

    convenience init(graphs: [String] = ["Examples/news.json"], store: String = "memory", arguments: [String] = []) throws {
        try self.init(Options(graphs: graphs, store: store, arguments: arguments))
    }

    /// Starts `navd serve` and waits (up to 10 s) until `/healthz` answers 200.
    convenience init(_ options: Options) throws {
        var lastFailure = "not started"
        for _ in 0..<3 {
            let port = try Self.freePort()
            let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("navd-test-\(port)-\(UUID().uuidString.prefix(8)).log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let process = Process()
            process.executableURL = Self.binary
            process.currentDirectoryURL = Self.packageRoot
            process.arguments = ["serve", "--listen", "127.0.0.1:\(port)", "--store", options.store]
                + options.graphs.flatMap { ["--graph", Self.packageRoot.appendingPathComponent($0).path] }
                + options.arguments
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVD_") }
            process.standardInput = FileHandle.nullDevice
            // One descriptor for both streams, so their writes share one file offset.
            let output = try FileHandle(forWritingTo: logFile)
            process.standardOutput = output
            process.standardError = output
            do {
                try process.run()
                try? output.close()
            } catch {
                try? output.close()
                throw StartFailure(description: "cannot run \(Self.binary.path): \(error) (run `swift build` first)")
            }
            if Self.waitUntilHealthy(port: port, process: process, logFile: options.arguments.contains("--log-level") ? nil : logFile) {
                self.init(port: port, options: options, process: process, logFile: logFile, validator: try? OpenAPIValidator.shared.get())
                return
            }
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            lastFailure = "navd \(process.arguments?.joined(separator: " ") ?? "") did not become healthy: \(log.suffix(2000))"
            if process.isRunning {
                Glibc.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
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
        if process.isRunning { process.terminate() }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            Glibc.kill(process.processIdentifier, SIGKILL)
            throw StartFailure(description: "navd did not exit within 10 s of SIGTERM; log: \(log.suffix(2000))")
        }
        guard process.terminationReason == .exit else {
            throw StartFailure(description: "navd died of signal \(process.terminationStatus); log: \(log.suffix(4000))")
        }
        exitStatus = process.terminationStatus
        return process.terminationStatus
    }

    /// Polls `GET /healthz` until it answers 200 (true), the process exits, or 10 s pass.
    ///
    /// - Parameter logFile: when given, answers count only once the process has logged that it is
    ///   listening: between `freePort()` and the bind, another daemon (of a test running in
    ///   parallel) may take the port, and its answers must not pass for this one's.
    private static func waitUntilHealthy(port: Int, process: Process, logFile: URL?) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if let logFile, (try? String(contentsOf: logFile, encoding: .utf8))?.contains("navd listening") != true {
                usleep(20_000)
                continue
            }
            if let connection = try? HTTPConnection(port: port, timeout: 2),
               (try? connection.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))) != nil,
               let answer = try? connection.readResponse(), answer.status == 200 {
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
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(5_000) }
    }

    // MARK: HTTP

    /// Sends one request on a new connection (`Connection: close`) and reads the answer,
    /// which is checked against the spec unless `validate` is false.
    @discardableResult
    func request(
        _ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = [],
        validate: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        var fields = headers
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method), fields.keys.first(where: { $0.lowercased() == "content-length" }) == nil {
            fields["Content-Length"] = String(body.count)
        }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let connection = try HTTPConnection(port: port)
        try connection.send(Array(head.utf8) + body)
        let answer = try connection.readResponse(method: method)
        if validate { check(answer, method: method, target: target, sourceLocation: sourceLocation) }
        return answer
    }

    /// Sends raw bytes as they are and reads one answer (validated when `validate`).
    func raw(_ bytes: [UInt8], method: String = "GET", target: String = "/", validate: Bool = true,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        let connection = try HTTPConnection(port: port)
        try connection.send(bytes)
        let answer = try connection.readResponse(method: method)
        if validate { check(answer, method: method, target: target, sourceLocation: sourceLocation) }
        return answer
    }

    /// Records every violation of the spec by `answer` as an issue at the caller.
    func check(_ answer: HTTPMessage, method: String, target: String, sourceLocation: SourceLocation) {
        Self.recordViolations(of: answer, method: method, target: target, validator: validator, sourceLocation: sourceLocation)
    }

    /// Records one issue per violation of the spec by `answer`.
    static func recordViolations(
        of answer: HTTPMessage, method: String, target: String, validator: OpenAPIValidator?, sourceLocation: SourceLocation
    ) {
        guard let validator else {
            Issue.record("openapi.yaml did not load: \(String(describing: OpenAPIValidator.shared))", sourceLocation: sourceLocation)
            return
        }
        for violation in validator.validate(method: method, path: target, status: answer.status, headers: answer.headers, body: answer.body) {
            Issue.record("spec violation: \(violation)\n  body: \(answer.text.prefix(600))", sourceLocation: sourceLocation)
        }
    }

    /// A JSON request.
    @discardableResult
    func send(
        _ method: String, _ target: String, json: JSON? = nil, token: String? = nil, headers: [String: String] = [:],
        contentType: String = "application/json", sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        var fields = headers
        if let token { fields["Authorization"] = "Bearer \(token)" }
        if json != nil { fields["Content-Type"] = contentType }
        return try request(method, target, headers: fields, body: json?.bytes ?? [], sourceLocation: sourceLocation)
    }

    // MARK: Sessions

    struct Session: Sendable {
        var id: String
        var token: String
        /// The creation answer (a `CreatedSession`).
        var created: JSON
        var url: String { "/v1/sessions/\(id)" }
    }

    /// `POST /v1/sessions`; expects 201.
    func createSession(
        graph: String? = nil, start: String? = nil, context: JSON? = nil, headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Session {
        var body: [String: JSON] = [:]
        if let graph { body["graph"] = .string(graph) }
        if let start { body["start"] = .string(start) }
        if let context { body["context"] = context }
        let answer = try send("POST", "/v1/sessions", json: .object(body), headers: headers, sourceLocation: sourceLocation)
        try #require(answer.status == 201, "create: \(answer)", sourceLocation: sourceLocation)
        let created = try answer.json()
        let id = try #require(created["id"]?.string, sourceLocation: sourceLocation)
        let token = try #require(created["token"]?.string, sourceLocation: sourceLocation)
        #expect(answer.headers["location"] == "/v1/sessions/\(id)", sourceLocation: sourceLocation)
        return Session(id: id, token: token, created: created)
    }

    func get(_ session: Session, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send("GET", session.url, token: session.token, sourceLocation: sourceLocation)
    }

    /// The session view (expects 200).
    func view(_ session: Session, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON {
        let answer = try get(session, sourceLocation: sourceLocation)
        try #require(answer.status == 200, "GET session: \(answer)", sourceLocation: sourceLocation)
        return try answer.json()
    }

    func navigate(_ session: Session, _ path: String, headers: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send("POST", session.url + "/navigate", json: ["path": .string(path)], token: session.token, headers: headers, sourceLocation: sourceLocation)
    }

    func transition(_ session: Session, _ name: String, params: JSON? = nil, headers: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        var body: [String: JSON] = ["name": .string(name)]
        if let params { body["params"] = params }
        return try send("POST", session.url + "/transitions", json: .object(body), token: session.token, headers: headers, sourceLocation: sourceLocation)
    }

    func exit(_ session: Session, headers: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send("POST", session.url + "/exit", token: session.token, headers: headers, sourceLocation: sourceLocation)
    }

    func back(_ session: Session, count: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send("POST", session.url + "/back", json: count.map { ["count": .int($0)] }, token: session.token, sourceLocation: sourceLocation)
    }

    func setParams(_ session: Session, screen: String, _ params: JSON, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        try send("PUT", session.url + "/screens/\(screen)/params", json: params, token: session.token, sourceLocation: sourceLocation)
    }

    func patchState(
        _ session: Session, screen: String, _ patch: JSON, contentType: String = "application/merge-patch+json",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> HTTPMessage {
        try send("PATCH", session.url + "/screens/\(screen)/state", json: patch, token: session.token, contentType: contentType, sourceLocation: sourceLocation)
    }

    func events(_ session: Session, after: Int? = nil, limit: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> HTTPMessage {
        let query = [after.map { "after=\($0)" }, limit.map { "limit=\($0)" }].compactMap { $0 }.joined(separator: "&")
        return try send("GET", session.url + "/events" + (query.isEmpty ? "" : "?" + query), token: session.token, sourceLocation: sourceLocation)
    }
}

// MARK: - Sharing one daemon in a suite

/// Starts one daemon around a whole suite and stops it (expecting exit status 0) after
/// the suite's last test; tests reach it with ``DaemonHarness/shared(sourceLocation:)``.
struct SharedDaemon: SuiteTrait, TestScoping {
    var options: DaemonHarness.Options

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let daemon = try DaemonHarness(options)
        do {
            try await DaemonHarness.$current.withValue(daemon) { try await function() }
        } catch {
            _ = try? daemon.stop()
            throw error
        }
        let status = try daemon.stop()
        #expect(status == 0, "navd exited with status \(status): \(daemon.log.suffix(2000))")
    }
}

extension Trait where Self == SharedDaemon {
    /// One `navd serve --store memory` for the suite.
    static func sharedDaemon(graphs: [String] = ["Examples/news.json"], arguments: [String] = []) -> SharedDaemon {
        SharedDaemon(options: .init(graphs: graphs, arguments: arguments))
    }
}

// MARK: - Reading answers

extension JSON {
    /// `events` as `type` or `type:scene` strings, the transcripts' notation.
    var eventNames: [String] {
        (self["events"]?.array ?? []).map { event in
            let type = event["type"]?.string ?? "?"
            guard let scene = event["scene"]?.string else { return type }
            return type + ":" + scene
        }
    }

    /// The `scene` of every screen on the stage, root first.
    var sceneNames: [String] {
        (self["screens"]?.array ?? []).compactMap { $0["scene"]?.string }
    }

    /// The top screen.
    var top: JSON? { self["screens"]?.array?.last }
}
