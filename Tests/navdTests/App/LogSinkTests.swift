import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import navd

/// The log batches `info` lines but never holds back a warning, and never reorders.
@Suite struct LogSinkTests {
    /// A pipe whose write end the sink writes to; reads without blocking.
    final class Pipe {
        let read: Int32
        let write: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw CancellationError() }
            read = ends[0]
            write = ends[1]
            _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
        }

        deinit {
            close(read)
            close(write)
        }

        /// Everything written so far.
        func drain() -> String {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(read, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes.append(contentsOf: chunk[..<count])
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test func infoLinesWaitForAFlush() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.write(Array("one\n".utf8), urgent: false)
        sink.write(Array("two\n".utf8), urgent: false)
        #expect(pipe.drain() == "")
        sink.flush()
        #expect(pipe.drain() == "one\ntwo\n")
        sink.flush()
        #expect(pipe.drain() == "")
    }

    @Test func anUrgentLineGoesOutAtOnceAfterTheLinesBeforeIt() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.write(Array("request\n".utf8), urgent: false)
        sink.write(Array("warning\n".utf8), urgent: true)
        #expect(pipe.drain() == "request\nwarning\n")
    }

    @Test func aFullBufferIsWrittenWithoutAFlush() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        let line = Array((String(repeating: "x", count: 99) + "\n").utf8)
        var written = 0
        while written + line.count < sink.batchBytes {
            sink.write(line, urgent: false)
            written += line.count
        }
        #expect(pipe.drain() == "")
        sink.write(line, urgent: false)
        let output = pipe.drain()
        #expect(output.utf8.count == written + line.count)
        #expect(output.split(separator: "\n").allSatisfy { $0.count == 99 })
    }
}
