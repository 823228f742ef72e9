import Foundation
import NavClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `navd serve` of the repository's own build, started on a free loopback port for one test
/// and stopped (SIGTERM, expecting exit status 0) by ``stop()``.
///
/// Started with `posix_spawn`, keeping none of this process's descriptors but its standard
/// streams (`closefrom`), and waited for with `waitpid`: not Foundation's `Process`, whose exit
/// notice is a socket the child inherits — and so does any child another test spawns at the same
/// moment, which then hides this one's exit until its own (the main package's tests met it).
///
/// The binary is `NAVD_BINARY`, else the main package's `.build/debug/navd` (`make test` builds
/// it before this package's tests run).
final class LiveNavd: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The repository root, from this file's place in `clients/swift/Tests/NavClientTests/Support/`.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        if let explicit = ProcessInfo.processInfo.environment["NAVD_BINARY"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        return repository.appendingPathComponent(".build/debug/navd")
    }

    let port: Int
    let url: URL
    private let pid: pid_t
    private let logFile: URL
    private let exited = NSLock()
    private var status: Int32?

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
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "navclient-test-\(self.port)-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let arguments =
            ["serve", "--listen", "127.0.0.1:\(self.port)", "--store", store, "--drain", "0"]
            + graphs.flatMap { ["--graph", Self.repository.appendingPathComponent($0).path] } + arguments
        pid = try Self.spawn(Self.binary.path, arguments, log: logFile.path, directory: Self.repository.path)
        let deadline = Date().addingTimeInterval(10)
        while !log.contains("navd listening") {
            guard isRunning, Date() < deadline else {
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

    /// SIGTERM, then the exit status (0 for a clean drain; 128 + the signal for a signal).
    @discardableResult
    func stop() -> Int32 {
        if isRunning { kill(pid, SIGTERM) }
        return waitUntilExit()
    }

    /// SIGKILL, as a crash: no drain, no `end` on any stream.
    func crash() {
        stopNow()
    }

    private func stopNow() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        _ = waitUntilExit()
    }

    /// Whether it still runs (reaped with `waitpid` once it has ended).
    private var isRunning: Bool {
        exited.lock()
        defer { exited.unlock() }
        var raw: Int32 = 0
        if status == nil, waitpid(pid, &raw, WNOHANG) == pid {
            status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        }
        return status == nil
    }

    private func waitUntilExit() -> Int32 {
        while isRunning { usleep(5_000) }
        return exited.withLock { status ?? -1 }
    }

    private typealias FileAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias PathAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// Runs `executable` with standard input from `/dev/null`, standard output and error to the
    /// file at `log`, in `directory`, with this process's environment minus `NAVD_*`, signals
    /// unblocked and at their defaults. glibc's `closefrom` and `chdir` file actions are looked up
    /// by name: the Glibc module does not declare them.
    private static func spawn(_ executable: String, _ arguments: [String], log: String, directory: String) throws -> pid_t {
        guard let handle = dlopen(nil, RTLD_NOW),
            let closeFrom = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np"),
            let changeDirectory = dlsym(handle, "posix_spawn_file_actions_addchdir_np")
        else { throw Failure(description: "glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_APPEND, 0)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        _ = unsafeBitCast(closeFrom, to: FileAction.self)(&actions, 3)
        _ = unsafeBitCast(changeDirectory, to: PathAction.self)(&actions, directory)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVD_") }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Failure(description: "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        return pid
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
