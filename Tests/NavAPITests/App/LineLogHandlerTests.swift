import Foundation
import Logging
import Testing

@testable import NavAPI
@testable import NavTestSupport

/// Client text reaches log lines (a method, a store's message about the input, metadata):
/// every piece is escaped, so no control character reaches a terminal and no newline forges a
/// line, and bounded, so one request cannot write kilobytes.
@Suite(.serialized) struct LineLogHandlerTests {
    @Test func messagesAndValuesAreEscapedAndBounded() throws {
        let pipe = try LogSinkTests.Pipe()
        let logger = Logger(label: "navd") { label in LineLogHandler(label: label, level: .info, sink: LogSink(descriptor: pipe.write)) }
        logger.error("bad \u{1B}[2J\nforged é\\", metadata: ["value": "\(String(repeating: "v", count: 10_000))", "nl": "a\r\nb"])
        let lines = LogSinkTests.lines(pipe.drain())
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasPrefix(#"level=error logger=navd msg="bad \x1b[2J\x0aforged \xc3\xa9\\" nl="a\x0d\x0ab" value="vvv"#), "\(line)")
        #expect(line.hasSuffix(#"...(10000 bytes)""#))
        #expect(line.utf8.count < 700)
        #expect(line.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F })
    }

    /// The request line's method, through the fast path that writes straight into the sink.
    @Test func theMethodOfARequestLineIsEscapedAndBounded() throws {
        let pipe = try LogSinkTests.Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.writeLine(level: .info, label: "navd", message: "request") { line in
            Application.appendRequestFields(
                method: "\u{1B}]0;owned\u{7}" + String(repeating: "M", count: 10_000), route: "unmatched", status: 404, seconds: 0.001,
                requestID: #"r\x1b"#, to: &line
            )
        }
        sink.flush()
        let text = String(LogSinkTests.lines(pipe.drain()).first ?? "")
        #expect(text.contains(#" request_id="r\\x1b" route="#), "\(text)")
        #expect(text.hasPrefix(#"level=info logger=navd msg=request method="\x1b]0;owned\x07MMM"#), "\(text)")
        #expect(text.contains(#"...(10010 bytes)" ms="#))
        #expect(text.utf8.count < 190)
        #expect(text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F })
    }

    /// The review's reproduction against the real daemon: a 10 KB method of escape sequences.
    /// On the binary: the method comes as raw bytes on a 10 KB request line through
    /// libmicrohttpd's parser, and the line checked is the one the process writes.
    @Test func aDaemonLogsAHostileMethodSafely() throws {
        let navd = try DaemonHarness()
        let method = "\u{1B}[31m" + String(repeating: "X", count: 10_000)
        _ = try navd.raw(Array("\(method) /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), validate: false)
        #expect(try navd.stop() == 0)
        let log = navd.log
        #expect(!log.utf8.contains(0x1B))
        let line = try #require(
            log.split(separator: "\n").first { $0.contains("msg=request method=") && $0.contains(#"\x1b[31m"#) }, "\(log.suffix(2000))")
        #expect(line.utf8.count < 360, "\(line)")
        #expect(line.contains("...(10005 bytes)"))
    }
}
