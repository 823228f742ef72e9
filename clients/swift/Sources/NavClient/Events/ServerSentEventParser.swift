/// Reads a `text/event-stream` body (the WHATWG HTML standard, "Server-sent events", §9.2.6)
/// chunk by chunk, whatever the chunks' boundaries: lines end in CR, LF or CRLF (a CRLF may be
/// split between two chunks), a line starting with `:` is a comment, `field: value` lines build a
/// message that an empty line dispatches.
///
/// Unlike OpenAPIRuntime's own reader, it hands comments on too: navd's `: ping` heartbeats are
/// how a client knows a quiet stream is still alive.
struct ServerSentEventParser: Sendable {
    /// What one dispatch, or one line, gives.
    enum Item: Sendable, Equatable {
        /// A message: its `event` type (`message` when none was given), its `data` lines joined
        /// with LF, and the last event id set so far (ids carry over from message to message).
        case message(event: String, data: String, lastEventID: String?)
        /// A comment line, without the colon and one leading space.
        case comment(String)
        /// A `retry` field: the reconnection time, in milliseconds.
        case retry(Int)
    }

    struct LineTooLong: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "an event-stream line longer than \(limit) bytes" }
    }

    /// The longest line taken: a session view is one `data` line, and can be megabytes.
    let maximumLineLength: Int
    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var eventType = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var lastEventID: String?

    init(maximumLineLength: Int = 16 << 20) {
        self.maximumLineLength = maximumLineLength
    }

    /// Feeds the next bytes. - Returns: the items completed by them, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }  // the LF of a CRLF
            }
            switch byte {
            case 0x0D:
                afterCR = true
                endLine(into: &items)
            case 0x0A:
                endLine(into: &items)
            default:
                guard line.count < maximumLineLength else { throw LineTooLong(limit: maximumLineLength) }
                line.append(byte)
            }
        }
        return items
    }

    private mutating func endLine(into items: inout [Item]) {
        defer { line.removeAll(keepingCapacity: true) }
        if atStart {
            atStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }  // a byte order mark
        }
        if line.isEmpty {
            dispatch(into: &items)
            return
        }
        let colon = line.firstIndex(of: 0x3A)
        if colon == line.startIndex {
            var comment = line.dropFirst()
            if comment.first == 0x20 { comment = comment.dropFirst() }
            items.append(.comment(String(decoding: comment, as: UTF8.self)))
            return
        }
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        switch name {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }),
                let milliseconds = Int(String(decoding: value, as: UTF8.self))
            {
                items.append(.retry(milliseconds))
            }
        default:
            break  // unknown fields are ignored
        }
    }

    private mutating func dispatch(into items: inout [Item]) {
        defer {
            eventType = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return }
        items.append(
            .message(
                event: eventType.isEmpty ? "message" : eventType, data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID))
    }
}
