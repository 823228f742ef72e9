import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `navd` run as a user runs it: in a working directory of the test's own (where `navd session`
/// keeps `.navd/session`), with the environment the test gives (no inherited `NAVD_*`).
struct CLIProcess {
    struct Run: CustomStringConvertible {
        var status: Int32
        var output: String
        var errors: String

        var description: String { "status \(status)\nstdout:\n\(output)\nstderr:\n\(errors)" }
        /// Standard error's lines.
        var errorLines: [Substring] { errors.split(separator: "\n") }
    }

    let directory: URL
    var environment: [String: String]

    /// Runs in `directory`, which is the caller's to keep (``remove()`` is not for it).
    init(directory: URL, environment: [String: String] = [:]) {
        self.directory = directory
        self.environment = environment
    }

    /// A new empty working directory.
    init(environment: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("navd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.environment = environment
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func spawn(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(
            DaemonHarness.binary.path, arguments, environment: DaemonHarness.environment(adding: environment), directory: directory.path,
            output: .pipe, errors: .pipe
        )
    }

    /// Runs `navd arguments` and waits (at most 30 s).
    func run(_ arguments: [String]) throws -> Run {
        let process = try spawn(arguments)
        let errorData = Locked<Data>(Data())
        let reader = Thread { errorData.set(process.errors?.readDataToEndOfFile() ?? Data()) }
        reader.start()
        let outputData = process.output?.readDataToEndOfFile() ?? Data()
        let deadline = Date().addingTimeInterval(30)
        let termination =
            process.wait(seconds: 30)
            ?? {
                process.send(SIGTERM)
                return process.waitUntilExit()
            }()
        while !errorData.isSet, Date() < deadline { usleep(1_000) }
        return Run(
            status: Self.status(termination),
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData.value, as: UTF8.self)
        )
    }

    /// An exit status as a shell gives it: 128 + the signal for a process a signal ended.
    static func status(_ termination: ChildProcess.Termination) -> Int32 {
        switch termination {
        case .exited(let status): status
        case .signalled(let signal): 128 + signal
        }
    }

    /// Starts `navd arguments` in the background (for `navd session watch`).
    func start(_ arguments: [String]) throws -> Background {
        Background(process: try spawn(arguments))
    }

    /// A running `navd`, whose standard output is read as it comes.
    final class Background: @unchecked Sendable {
        let process: ChildProcess
        private let text = Locked<String>("")
        private let errorText = Locked<String>("")

        init(process: ChildProcess) {
            self.process = process
            let text = self.text
            let errorText = self.errorText
            for (handle, box) in [(process.output, text), (process.errors, errorText)] {
                guard let handle else { continue }
                Thread {
                    while true {
                        let data = handle.availableData
                        if data.isEmpty { break }
                        box.set(box.value + String(decoding: data, as: UTF8.self))
                    }
                }.start()
            }
        }

        var output: String { text.value }
        var errors: String { errorText.value }

        /// Waits (at most `seconds`) until standard output (or, with `errors`, standard error)
        /// contains `needle`.
        func waitFor(_ needle: String, inErrors: Bool = false, seconds: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if (inErrors ? errors : output).contains(needle) { return true }
                usleep(10_000)
            }
            return (inErrors ? errors : output).contains(needle)
        }

        /// Waits (at most `seconds`) until either stream contains `needle` (a daemon's log line).
        func waitForEither(_ needle: String, seconds: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if output.contains(needle) || errors.contains(needle) { return true }
                usleep(10_000)
            }
            return false
        }

        /// Waits (at most `seconds`) for the process to exit; its status, or nil (then it is killed).
        func exitStatus(within seconds: Double = 10) -> Int32? {
            guard let termination = process.wait(seconds: seconds) else {
                process.send(SIGKILL)
                _ = process.waitUntilExit()
                return nil
            }
            return CLIProcess.status(termination)
        }
    }
}

extension CLIProcess {
    /// Runs `navd` with `arguments` from the package root and waits (at most 30 s).
    static func navd(_ arguments: [String]) throws -> Run {
        try CLIProcess(directory: DaemonHarness.packageRoot).run(arguments)
    }

    /// A tiny lock-protected box for the stderr reader thread.
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        private var done = false

        init(_ value: Value) { stored = value }

        func set(_ value: Value) {
            lock.lock()
            stored = value
            done = true
            lock.unlock()
        }

        var value: Value {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }

        var isSet: Bool {
            lock.lock()
            defer { lock.unlock() }
            return done
        }
    }
}
