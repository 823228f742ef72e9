import NavJSON

/// Splits a server-sent-event stream into messages as its bytes arrive (WHATWG HTML §9.2):
/// `field: value` lines, a blank line ends a message, a line starting with `:` is a comment.
/// The one parser of event streams navd's code has: the CLI's `watch` and the tests read with it.
package struct EventStreamParser {
    package struct Message: Equatable {
        package var event: String
        package var id: String?
        package var data: String
    }

    private var line: [UInt8] = []
    private var event = ""
    private var id: String?
    private var data: [String] = []
    /// Whether the stream's own lines come out as messages too: a comment (`: ping`) as event
    /// `comment` with its text, a `retry:` hint as event `retry` with its value. A client that
    /// follows the stream ignores them; a test of the stream looks at them.
    private let includingComments: Bool

    package init(includingComments: Bool = false) {
        self.includingComments = includingComments
    }

    /// The messages `bytes` completes.
    package mutating func feed(_ bytes: [UInt8]) -> [Message] {
        var messages: [Message] = []
        for byte in bytes {
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            let text = String(decoding: line, as: UTF8.self)
            line.removeAll(keepingCapacity: true)
            if text.isEmpty {
                if !data.isEmpty || !event.isEmpty {
                    messages.append(Message(event: event.isEmpty ? "message" : event, id: id, data: data.joined(separator: "\n")))
                }
                event = ""
                id = nil
                data = []
                continue
            }
            if text.hasPrefix(":") {
                if includingComments {
                    messages.append(Message(event: "comment", id: nil, data: text.dropFirst().trimmingCharacters(in: " ")))
                }
                continue
            }
            let field = text.prefix { $0 != ":" }
            var value = text.dropFirst(field.count)
            if value.hasPrefix(":") { value = value.dropFirst() }
            if value.hasPrefix(" ") { value = value.dropFirst() }
            switch field {
            case "event": event = String(value)
            case "data": data.append(String(value))
            case "id": id = String(value)
            case "retry" where includingComments: messages.append(Message(event: "retry", id: nil, data: String(value)))
            default: break
            }
        }
        return messages
    }
}
