import NavCore
import NavJSON
import NavSnapshot

/// The messages of a session's event stream (docs/design.md, "Live sessions"), in the `text/event-stream` format
/// (WHATWG HTML, server-sent events). Each message's data is one line of JSON: navd's JSON never
/// holds a raw line break (the writer escapes every control character).
extension JSONWriter {
    /// `event: view` with the session view.
    package mutating func writeViewMessage(_ view: [UInt8]) {
        writeLiteral("event: view\ndata: ")
        writeRaw(bytes: view)
        writeLiteral("\n\n")
    }

    /// The same messages, each event's data cut out of `eventsJSON`, the events as the change
    /// wrote them already, with where each ends (``Swift/Array/jsonBytes(eventEnds:)``), instead of
    /// writing them again. Writes them from `events` when `ends` does not fit.
    package mutating func writeLifecycleMessages(_ events: [LifecycleEvent], json eventsJSON: [UInt8], ends: [Int]) {
        guard Self.cuts(ends, count: events.count, of: eventsJSON) else {
            writeLifecycleMessages(events)
            return
        }
        eventsJSON.withUnsafeBufferPointer { json in
            events.withUnsafeBufferPointer { events in
                // Past the `[`, then past each event's `,`.
                var start = 1
                for index in events.indices {
                    writeLiteral("id: ")
                    writeInt(events[index].seq)
                    writeLiteral("\nevent: lifecycle\ndata: ")
                    writeRaw(bytes: UnsafeBufferPointer(rebasing: json[start..<ends[index]]))
                    writeLiteral("\n\n")
                    start = ends[index] + 1
                }
            }
        }
    }

    /// Whether `ends` cuts the array `json` into `count` elements: each after the previous one's
    /// `,` (the first after the `[`), the last one before the `]`.
    package static func cuts(_ ends: [Int], count: Int, of json: [UInt8]) -> Bool {
        guard ends.count == count, count > 0, json.first == UInt8(ascii: "["), ends[count - 1] == json.count - 1 else { return false }
        var start = 1
        for end in ends {
            guard end > start, end < json.count, json[end] == UInt8(ascii: end == json.count - 1 ? "]" : ",") else { return false }
            start = end + 1
        }
        return true
    }

    /// `id: <seq>`, `event: lifecycle` with the event, for each event in order.
    package mutating func writeLifecycleMessages(_ events: [LifecycleEvent]) {
        events.withUnsafeBufferPointer { events in
            guard let first = events.baseAddress else { return }
            for index in events.indices {
                writeLiteral("id: ")
                writeInt(events[index].seq)
                writeLiteral("\nevent: lifecycle\ndata: ")
                writeEvent(first + index)
                writeLiteral("\n\n")
            }
        }
    }

    /// `event: end` with `{"reason": …}`: the stream closes after it.
    package mutating func writeEndMessage(reason: String) {
        writeLiteral("event: end\ndata: {\"reason\":")
        writeString(reason)
        writeLiteral("}\n\n")
    }

    /// `: heartbeat <seconds>`, a stream's first line: how often a `: ping` comes, so that a
    /// client can tell a stream gone silent (no message or comment within two intervals) from a
    /// quiet one. A comment, which EventSource skips.
    package mutating func writeHeartbeatAnnouncement(seconds: Int?) {
        guard let seconds else { return }
        writeLiteral(": heartbeat ")
        writeInt(seconds)
        writeLiteral("\n\n")
    }

    /// A retry hint for the client's reconnection (EventSource waits this long, in milliseconds).
    package mutating func writeRetry(milliseconds: Int) {
        writeLiteral("retry: ")
        writeInt(milliseconds)
        writeLiteral("\n\n")
    }
}

extension Array where Element == UInt8 {
    /// A heartbeat: a comment line, which every client ignores.
    package static let ping: [UInt8] = Array(": ping\n\n".utf8)
}
