import Logging
import Testing

@testable import NavAPI
@testable import NavCLI
@testable import NavHTTP
@testable import NavSessions
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The log batches `info` lines but never holds back a notice or worse, and never reorders;
/// lines have one shape, request lines included.
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

    /// The lines written so far, each without its timestamp field (checked to be a UTC time to
    /// the millisecond).
    static func lines(_ output: String) -> [String] {
        output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let stamp = line.prefix(28)
            #expect(stamp.wholeMatch(of: #/ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s/#) != nil, "\(line)")
            return String(line.dropFirst(28))
        }
    }

    @Test func infoLinesWaitForAFlush() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.writeLine(level: .info, label: "navd", message: "one")
        sink.writeLine(level: .debug, label: "navd", message: "two")
        #expect(pipe.drain() == "")
        sink.flush()
        #expect(Self.lines(pipe.drain()) == ["level=info logger=navd msg=one", "level=debug logger=navd msg=two"])
        sink.flush()
        #expect(pipe.drain() == "")
    }

    @Test func aNoticeOrWorseGoesOutAtOnceAfterTheLinesBeforeIt() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.writeLine(level: .info, label: "navd", message: "request")
        sink.writeLine(level: .notice, label: "navd", message: "listening")
        #expect(Self.lines(pipe.drain()) == ["level=info logger=navd msg=request", "level=notice logger=navd msg=listening"])
        sink.writeLine(level: .error, label: "store", message: "failed")
        #expect(Self.lines(pipe.drain()) == ["level=error logger=store msg=failed"])
    }

    @Test func aFullBufferIsWrittenWithoutAFlush() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        let text = String(repeating: "x", count: 99)
        let lineBytes = 28 + "level=info logger=t msg=".utf8.count + 99 + 1
        var written = 0
        while written + lineBytes < sink.batchBytes {
            sink.writeLine(level: .info, label: "t", message: text)
            written += lineBytes
        }
        #expect(pipe.drain() == "")
        sink.writeLine(level: .info, label: "t", message: text)
        let output = pipe.drain()
        #expect(output.utf8.count == written + lineBytes)
        #expect(Self.lines(output).allSatisfy { $0 == "level=info logger=t msg=" + text })
    }

    /// The part of a stamp formatted once a second; each line adds its milliseconds and `Z`.
    @Test func timestampsAreUTC() {
        #expect(String(decoding: LogSink.timestamp(second: 0), as: UTF8.self) == "1970-01-01T00:00:00")
        #expect(String(decoding: LogSink.timestamp(second: 1_795_225_684), as: UTF8.self) == "2026-11-21T01:48:04")
    }

    /// Milliseconds move within a second: two lines 20 ms apart have different stamps.
    @Test func timestampsHaveMilliseconds() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.writeLine(level: .notice, label: "t", message: "a")
        usleep(20_000)
        sink.writeLine(level: .notice, label: "t", message: "b")
        let stamps = pipe.drain().split(separator: "\n").map { $0.prefix(28) }
        #expect(stamps.count == 2)
        #expect(stamps[0] != stamps[1], "\(stamps)")
    }

    @Test func theHandlerWritesTheMessageAndSortedMetadata() throws {
        let pipe = try Pipe()
        var logger = Logger(label: "navd") { label in LineLogHandler(label: label, level: .info, sink: LogSink(descriptor: pipe.write)) }
        logger[metadataKey: "zone"] = "a"
        logger.warning("graph issue", metadata: ["file": "news.json", "detail": "warning: /scenes/a: a b=c \"d\""])
        logger.debug("not written")
        #expect(
            Self.lines(pipe.drain()) == [
                #"level=warning logger=navd msg="graph issue" detail="warning: /scenes/a: a b=c \"d\"" file=news.json zone=a"#
            ])
    }

    /// The request log, written by the application straight into the sink, has the same shape as
    /// any other line, with its fields in sorted order.
    @Test func everyRequestGetsOneLogLine() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        let logger = Logger(label: "navd") { label in LineLogHandler(label: label, level: .info, sink: sink) }
        let application = Application(configuration: .init(), store: MemoryStore(), logger: logger, accessLog: sink)
        _ = application.handle(HTTPRequest(method: "GET", path: "/healthz", headers: ["X-Request-Id": "probe-1"]))
        _ = application.handle(HTTPRequest(method: "GET", path: "/v1/sessions/nope", headers: ["X-Request-Id": "probe-2"]))
        _ = application.handle(HTTPRequest(method: "GET", path: "/nowhere", headers: ["X-Request-Id": "probe-3"]))
        sink.flush()
        let lines = Self.lines(pipe.drain()).map { $0.replacing(/\sms=\d+\.\d\s/, with: " ms=T ") }
        #expect(
            lines == [
                "level=info logger=navd msg=request method=GET ms=T request_id=probe-1 route=/healthz status=200",
                "level=info logger=navd msg=request method=GET ms=T request_id=probe-2 route=/v1/sessions/{id} status=401",
                "level=info logger=navd msg=request method=GET ms=T request_id=probe-3 route=unmatched status=404"
            ])
    }

    @Test func aLogLevelAboveInfoWritesNoRequestLines() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        let logger = Logger(label: "navd") { label in LineLogHandler(label: label, level: .notice, sink: sink) }
        let application = Application(configuration: .init(), store: MemoryStore(), logger: logger, accessLog: sink)
        _ = application.handle(HTTPRequest(method: "GET", path: "/healthz"))
        sink.flush()
        #expect(pipe.drain() == "")
    }

    /// Request lines bypass swift-log only when that changes nothing: a plain line handler.
    @Test func requestLinesGoStraightToTheSinkOnlyForAPlainLineHandler() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        let plain = Logger(label: "navd") { label in LineLogHandler(label: label, level: .info, sink: sink) }
        #expect(Daemon.accessLog(for: plain) === sink)
        var tagged = plain
        tagged[metadataKey: "instance"] = "a"
        #expect(Daemon.accessLog(for: tagged) == nil)
        let other = Logger(label: "navd") { label in StreamLogHandler.standardError(label: label) }
        #expect(Daemon.accessLog(for: other) == nil)
    }
}
