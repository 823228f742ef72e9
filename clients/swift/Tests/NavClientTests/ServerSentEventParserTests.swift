import Testing

@testable import NavClient

@Suite struct ServerSentEventParserTests {
    typealias Item = ServerSentEventParser.Item

    static let stream =
        "retry: 2000\n\nevent: view\ndata: {\"v\":1}\n\n: ping\n\nid: 6\nevent: lifecycle\ndata: {\"seq\":6}\n\nevent: end\ndata: {\"reason\":\"deleted\"}\n\n"
    static let expected: [Item] = [
        .retry(2000),
        .message(event: "view", data: #"{"v":1}"#, lastEventID: nil),
        .comment("ping"),
        .message(event: "lifecycle", data: #"{"seq":6}"#, lastEventID: "6"),
        .message(event: "end", data: #"{"reason":"deleted"}"#, lastEventID: "6")
    ]

    @Test func navdsStreamReadsAsItsMessages() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Array(Self.stream.utf8)) == Self.expected)
    }

    /// Whatever the chunks' boundaries — a byte at a time, or cut inside a CRLF — the same items.
    @Test(arguments: [1, 2, 3, 7, 64])
    func chunkBoundariesDoNotMatter(_ size: Int) throws {
        for text in [
            Self.stream, Self.stream.replacingOccurrences(of: "\n", with: "\r\n"), Self.stream.replacingOccurrences(of: "\n", with: "\r")
        ] {
            var parser = ServerSentEventParser()
            var items: [Item] = []
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                items += try parser.feed(bytes.prefix(size))
                bytes = bytes.dropFirst(size)
            }
            #expect(items == Self.expected, "\(size)-byte chunks of \(text.debugDescription.prefix(40))")
        }
    }

    @Test func fieldsFollowTheStandard() throws {
        var parser = ServerSentEventParser()
        let text = "\u{FEFF}data:one\ndata:  two\nfoo: ignored\nretry: 12x\nid: 1\u{0}2\n\ndata\n\nevent: only\n\n:\n"
        #expect(
            try parser.feed(Array(text.utf8)) == [
                // A byte order mark is skipped; one space after the colon is dropped, no more; data
                // lines join with LF; an unknown field, a retry that is not digits and an id with NUL
                // are ignored.
                .message(event: "message", data: "one\n two", lastEventID: nil),
                // `data` with no colon is an empty data line.
                .message(event: "message", data: "", lastEventID: nil),
                // A message with no data is not dispatched, and its event type is forgotten.
                .comment("")
            ])
    }

    @Test func aLineLongerThanTheLimitIsRefused() throws {
        var parser = ServerSentEventParser(maximumLineLength: 16)
        #expect(try parser.feed(Array("data: short\n\n".utf8)).count == 1)
        #expect(throws: ServerSentEventParser.LineTooLong.self) {
            try parser.feed(Array(("data: " + String(repeating: "x", count: 32)).utf8))
        }
    }
}
