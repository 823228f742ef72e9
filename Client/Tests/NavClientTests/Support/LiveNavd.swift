import Foundation
import NavClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A `navd serve` of the repository's own build, started on a free loopback port for one test
/// and stopped (SIGTERM, expecting exit status 0) by ``stop()``.
///
/// The binary is `NAVD_BINARY`, else the main package's `.build/debug/navd` (`make test` builds
/// it before this package's tests run).
final class LiveNavd: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The repository root, from this file's place in `Client/Tests/NavClientTests/Support/`.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        if let explicit = ProcessInfo.processInfo.environment["NAVD_BINARY"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        return repository.appendingPathComponent(".build/debug/navd")
    }

    let port: Int
    let url: URL
    private let process: Process
    private let logFile: URL

    /// Starts navd serving `graphs` (relative to the repository) on a memory store, and waits
    /// (up to 10 s) until it listens.
    ///
    /// - Parameters:
    ///   - port: the port to listen on (a free one when nil), e.g. a stopped navd's, to restart it.
    ///   - store: `navd serve --store`.
    init(
        graphs: [String] = ["Examples/news.json", "Examples/stopwatch.json"], arguments: [String] = [],
        port: Int? = nil, store: String = "memory"
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw Failure(description: "no navd at \(Self.binary.path): run `swift build` in the repository first, or set NAVD_BINARY")
        }
        self.port = try port ?? Self.freePort()
        url = URL(string: "http://127.0.0.1:\(self.port)")!
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("navclient-test-\(self.port)-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process = Process()
        process.executableURL = Self.binary
        process.currentDirectoryURL = Self.repository
        process.arguments = ["serve", "--listen", "127.0.0.1:\(self.port)", "--store", store, "--drain", "0"]
            + graphs.flatMap { ["--graph", Self.repository.appendingPathComponent($0).path] } + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVD_") }
        process.standardInput = FileHandle.nullDevice
        let output = try FileHandle(forWritingTo: logFile)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try? output.close()
        let deadline = Date().addingTimeInterval(10)
        while !log.contains("navd listening") {
            guard process.isRunning, Date() < deadline else {
                stopNow()
                throw Failure(description: "navd did not start: \(log.suffix(2000))")
            }
            usleep(20_000)
        }
    }

    deinit {
        stopNow()
        try? FileManager.default.removeItem(at: logFile)
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// A client of this navd.
    func client(token: String? = nil, via port: Int? = nil) -> NavClient {
        NavClient(serverURL: URL(string: "http://127.0.0.1:\(port ?? self.port)")!, token: token)
    }

    /// SIGTERM, then the exit status (0 for a clean drain).
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SIGKILL, as a crash: no drain, no `end` on any stream.
    func crash() {
        stopNow()
    }

    private func stopNow() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A loopback port nothing listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "cannot bind a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
