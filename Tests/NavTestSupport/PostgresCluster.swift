import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL cluster for one test suite: `initdb` into a temporary folder,
/// `pg_ctl start` on a free loopback port, a `navd` database; stopped and removed by `stop()`.
///
/// PostgreSQL refuses to run as root, so as root every server command runs as the
/// `postgres` user (`runuser`), which owns the folder.
final class PostgresCluster: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let port: Int
    let directory: String
    private let bin: String

    /// The connection URL navd takes with `--store`.
    var url: String { "postgres://postgres@127.0.0.1:\(port)/navd" }

    init() throws {
        guard let bin = Self.binaries() else {
            throw Failure(description: "PostgreSQL server binaries not found under /usr/lib/postgresql (make test-deps installs them)")
        }
        self.bin = bin
        self.port = try DaemonHarness.freePort()
        self.directory = "/tmp/navd-pg-\(port)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 { try Self.run("/bin/chown", ["postgres", directory]) }
        try runAsOwner("\(bin)/initdb", ["-D", "\(directory)/data", "-A", "trust", "-U", "postgres", "--no-sync"])
        try resume()
        try runAsOwner("\(bin)/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "navd"])
    }

    deinit {
        stop()
    }

    /// Stops the server and removes its folder.
    func stop() {
        guard FileManager.default.fileExists(atPath: directory) else { return }
        _ = try? runAsOwner("\(bin)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops the server (`pg_ctl stop -m fast`: open connections are ended), keeping its data,
    /// as an outage would; ``resume()`` starts it again on the same port.
    func pause() throws {
        try runAsOwner("\(bin)/pg_ctl", ["-D", "\(directory)/data", "-m", "fast", "-w", "-t", "30", "stop"])
    }

    /// Starts the server ``pause()`` stopped, on the same port and data.
    func resume() throws {
        try runAsOwner(
            "\(bin)/pg_ctl",
            [
                "-D", "\(directory)/data", "-l", "\(directory)/log", "-w", "-t", "30", "start",
                "-o", "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c max_connections=200"
            ])
    }

    /// Runs `psql -c sql` and returns its unaligned output.
    func query(_ sql: String) throws -> String {
        try runAsOwner("\(bin)/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "navd", "-At", "-c", sql])
    }

    static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.reversed()
            .map { "\(root)/\($0)/bin" }.first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    @discardableResult
    private func runAsOwner(_ tool: String, _ arguments: [String]) throws -> String {
        if getuid() == 0 { return try Self.run("/sbin/runuser", ["-u", "postgres", "--", tool] + arguments) }
        return try Self.run(tool, arguments)
    }

    /// Runs a tool to completion, its output in a file rather than a pipe: `pg_ctl start` leaves
    /// the server running, and a server holding the pipe would keep a read from ever ending.
    @discardableResult
    private static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let outputPath = "/tmp/navd-pg-output-\(UUID().uuidString.prefix(12))"
        defer { unlink(outputPath) }
        let termination = try ChildProcess(tool, arguments, output: .file(outputPath), errors: .output).waitUntilExit()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard termination == .exited(0) else {
            throw Failure(description: "\(tool) \(arguments.joined(separator: " ")) failed (\(termination)): \(text)")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
