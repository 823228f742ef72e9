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

    private func process(_ arguments: [String], output: Pipe, errors: Pipe) -> Process {
        let process = Process()
        process.executableURL = DaemonHarness.binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVD_") }.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Runs `navd arguments` and waits (at most 30 s).
    func run(_ arguments: [String]) throws -> Run {
        let output = Pipe()
        let errors = Pipe()
        let process = process(arguments, output: output, errors: errors)
        try process.run()
        let errorData = CLITests.Locked<Data>(Data())
        let reader = Thread { errorData.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        while !errorData.isSet, Date() < deadline { usleep(1_000) }
        return Run(
            status: process.terminationStatus,
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData.value, as: UTF8.self)
        )
    }

    /// Starts `navd arguments` in the background (for `navd session watch`).
    func start(_ arguments: [String]) throws -> Background {
        let output = Pipe()
        let errors = Pipe()
        let process = process(arguments, output: output, errors: errors)
        try process.run()
        return Background(process: process, output: output, errors: errors)
    }

    /// A running `navd`, whose standard output is read as it comes.
    final class Background: @unchecked Sendable {
        let process: Process
        private let text = CLITests.Locked<String>("")
        private let errorText = CLITests.Locked<String>("")

        init(process: Process, output: Pipe, errors: Pipe) {
            self.process = process
            let text = self.text
            let errorText = self.errorText
            for (pipe, box) in [(output, text), (errors, errorText)] {
                Thread {
                    while true {
                        let data = pipe.fileHandleForReading.availableData
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
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            guard !process.isRunning else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }
    }
}
