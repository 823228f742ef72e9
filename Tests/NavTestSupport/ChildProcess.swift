import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program the tests run: `posix_spawn`, with nothing inherited but its three standard
/// streams, and its exit learnt from `waitpid`.
///
/// Not Foundation's `Process`. On Linux, `Process` learns of an exit when a socket the child
/// inherits is closed, and it closes the parent's other descriptors in the child only up to the
/// highest one open when it looked: a child spawned at the same moment by another thread inherits
/// the first child's socket, and the first child's exit then goes unnoticed until the second
/// exits. A fresh-clone CI run waited 10 s for a daemon that had stopped, while three daemons
/// started side by side. The same inheritance keeps another test's pipe or client socket open
/// in a long-lived child (so a read never sees its end, a server never sees a client leave).
/// Here every descriptor but 0, 1 and 2 is closed in the child (`closefrom`), and the pipes are
/// made close-on-exec.
final class ChildProcess: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Where standard output or standard error goes.
    enum Destination {
        case null
        /// Written from the start of a file the test created.
        case file(String)
        /// A pipe the test reads: ``output`` or ``errors``.
        case pipe
        /// Standard error only: to the same descriptor as standard output (one file offset).
        case output
    }

    /// How the process ended.
    enum Termination: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    let processIdentifier: pid_t
    /// Standard output's read end, for ``Destination/pipe``.
    let output: FileHandle?
    /// Standard error's read end, for ``Destination/pipe``.
    let errors: FileHandle?
    private let state = NSLock()
    private var ended: Termination?

    /// Starts `executable` (a path) with standard input from `/dev/null`.
    ///
    /// - Parameters:
    ///   - environment: the whole environment; nil passes this process's own.
    ///   - directory: the working directory; nil keeps this process's.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        output outputDestination: Destination = .null, errors errorsDestination: Destination = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // The child's ends of the pipes, closed here once it has them (the parent's ends are in
        // `output` and `errors`, whose handles close them).
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }
        func route(_ destination: Destination, to fd: Int32) throws -> FileHandle? {
            switch destination {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .output:
                posix_spawn_file_actions_adddup2(&actions, 1, fd)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                try Self.closeOnExecPipe(&ends)
                childEnds.append(ends[1])
                // dup2 clears close-on-exec on the copy the child keeps.
                posix_spawn_file_actions_adddup2(&actions, ends[1], fd)
                return FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
            }
            return nil
        }
        output = try route(outputDestination, to: 1)
        errors = try route(errorsDestination, to: 2)
        try Self.closeFrom(3, &actions)
        if let directory { try Self.changeDirectory(to: directory, &actions) }

        // Signals as a shell would leave them: none blocked, none ignored. A child inherits both
        // the mask and the ignored signals of the test runner, where a SIGTERM sent to a child
        // started without this never ended it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned: Int32
        if let environment {
            let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        } else {
            spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard spawned == 0 else {
            try? output?.close()
            try? errors?.close()
            throw Failure(description: "cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        processIdentifier = pid
    }

    /// A child left running is killed, so that none outlives the tests.
    deinit {
        if isRunning {
            Glibc.kill(processIdentifier, SIGKILL)
            _ = waitUntilExit()
        }
    }

    /// How it ended, or nil while it runs.
    var termination: Termination? {
        state.lock()
        defer { state.unlock() }
        if ended == nil {
            var status: Int32 = 0
            if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier {
                ended = (status & 0x7f) == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            }
        }
        return ended
    }

    var isRunning: Bool { termination == nil }

    /// Sends `signal` (nothing once it has been reaped: its process id may be someone else's).
    func send(_ signal: Int32) {
        if isRunning { Glibc.kill(processIdentifier, signal) }
    }

    /// Waits at most `seconds` for it to end. - Returns: how it ended, or nil if it still runs.
    func wait(seconds: Double) -> Termination? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let termination { return termination }
            usleep(5_000)
        }
        return termination
    }

    /// Waits for it to end, however long that takes.
    func waitUntilExit() -> Termination {
        while true {
            if let termination { return termination }
            usleep(5_000)
        }
    }

    // MARK: glibc's GNU extensions (not in the Glibc module's headers)

    private typealias FileAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias PathAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static func symbol<T>(_ name: String, as type: T.Type) throws -> T {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else {
            throw Failure(description: "\(name) not found (glibc 2.34 or later has it)")
        }
        return unsafeBitCast(address, to: type)
    }

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// `pipe2(O_CLOEXEC)`: a pipe no other child inherits, not even one spawned between the
    /// pipe's creation and an `fcntl`.
    private static func closeOnExecPipe(_ ends: inout [Int32]) throws {
        let make = try symbol("pipe2", as: Pipe2.self)
        guard make(&ends, O_CLOEXEC) == 0 else { throw Failure(description: "pipe2: \(String(cString: strerror(errno)))") }
    }

    private static func closeFrom(_ fd: Int32, _ actions: inout posix_spawn_file_actions_t) throws {
        let add = try symbol("posix_spawn_file_actions_addclosefrom_np", as: FileAction.self)
        guard add(&actions, fd) == 0 else { throw Failure(description: "posix_spawn_file_actions_addclosefrom_np failed") }
    }

    private static func changeDirectory(to path: String, _ actions: inout posix_spawn_file_actions_t) throws {
        let add = try symbol("posix_spawn_file_actions_addchdir_np", as: PathAction.self)
        guard add(&actions, path) == 0 else { throw Failure(description: "posix_spawn_file_actions_addchdir_np failed") }
    }

    /// Runs `executable` to its end with standard output and standard error in one pipe.
    /// - Returns: how it ended and what it wrote.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil
    ) throws -> (termination: Termination, output: String) {
        let child = try ChildProcess(executable, arguments, environment: environment, directory: directory, output: .pipe, errors: .output)
        let text = String(decoding: child.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        return (child.waitUntilExit(), text)
    }
}
