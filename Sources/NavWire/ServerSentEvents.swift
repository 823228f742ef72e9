import NavCore
import NavJSON

/// The messages of a session's event stream (DESIGN §8), in the `text/event-stream` format
/// (WHATWG HTML, server-sent events). Each message's data is one line of JSON: navd's JSON never
/// holds a raw line break (the writer escapes every control character).
extension JSONWriter {
    /// `event: view` with the session view.
    package mutating func writeViewMessage(_ view: [UInt8]) {
        writeLiteral("event: view\ndata: ")
        writeRaw(bytes: view)
        writeLiteral("\n\n")
    }

    /// `id: <seq>`, `event: lifecycle` with the event, for each event in order.
    package mutating func writeLifecycleMessages(_ events: [LifecycleEvent]) {
        events.withUnsafeBufferPointer { events in
            guard let first = events.baseAddress else { return }
            for index in events.indices {
                writeLiteral("id: ")
                writeInt(events[index].seq)
                writeLiteral("\nevent: lifecycle\ndata: ")
                NavWire.writeEvent(first + index, to: &self)
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
