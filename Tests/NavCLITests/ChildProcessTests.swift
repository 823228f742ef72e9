import Foundation
import Testing

@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' own process runner (``ChildProcess``): what every daemon, CLI and tool the tests
/// start relies on, so that one test's children never hold another's descriptors.
@Suite struct ChildProcessTests {
    /// The descriptors `pid` has open, by number.
    static func openDescriptors(of pid: pid_t) -> [Int] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap { Int($0) }.sorted()
    }

    @Test func aChildHoldsNothingButItsStandardStreams() throws {
        // A descriptor any child could inherit: a pipe without close-on-exec, as sockets and
        // Foundation's pipes are.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let child = try ChildProcess("/bin/sleep", ["30"])
        defer { child.send(SIGKILL) }
        // /proc shows the child's descriptors once it runs sleep, not while it is still a copy of
        // this process closing what it inherited: they are read only after it is seen to run sleep.
        var descriptors: [Int] = []
        for _ in 0..<200 {
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.processIdentifier)/exe"))?.hasSuffix("sleep")
                == true
            {
                descriptors = Self.openDescriptors(of: child.processIdentifier)
                break
            }
            usleep(10_000)
        }
        #expect(descriptors == [0, 1, 2])
        // So the pipe's reader sees its end as soon as the test closes the writer.
        close(ends[1])
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 0)
    }

    @Test func anExitIsSeenWhileAChildStartedAtTheSameMomentRuns() throws {
        // Foundation's `Process` missed this: its exit signal is a socket the sibling inherited.
        for _ in 0..<20 {
            let long = OnThread { try ChildProcess("/bin/sleep", ["30"]) }
            let short = try ChildProcess("/bin/sh", ["-c", "exit 3"])
            let sibling = try long.value()
            defer { sibling.send(SIGKILL) }
            #expect(short.wait(seconds: 5) == .exited(3))
        }
    }

    @Test func outputsGoWhereTheyAreSentAndSignalsAreReported() throws {
        let run = try ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; pwd"], directory: "/tmp")
        #expect(run.termination == .exited(0))
        #expect(run.output == "out\nerr\n/tmp\n")
        let separate = try ChildProcess("/bin/sh", ["-c", "echo out; echo err >&2"], environment: ["A": "1"], output: .pipe, errors: .pipe)
        #expect(String(decoding: separate.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self) == "out\n")
        #expect(String(decoding: separate.errors?.readDataToEndOfFile() ?? Data(), as: UTF8.self) == "err\n")
        let environment = try ChildProcess.run("/usr/bin/env", [], environment: ["ONLY": "this"])
        #expect(environment.output == "ONLY=this\n")
        let killed = try ChildProcess("/bin/sleep", ["30"])
        killed.send(SIGTERM)
        #expect(killed.wait(seconds: 5) == .signalled(SIGTERM))
        #expect(throws: ChildProcess.Failure.self) { try ChildProcess("/nonexistent/tool", []) }
    }
}
