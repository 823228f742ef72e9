import Logging
import NavJSON

/// One line per log event on standard error: `2026-11-22T01:28:04Z info navd: graph loaded file=…`.
///
/// swift-log's `StreamLogHandler` formats its timestamp with two `strftime` calls and copies
/// metadata through several strings for every event. This renders the message and the metadata
/// (keys sorted) as bytes and hands them to ``LogSink``, which stamps the line and writes `info`
/// lines in batches. (The request log skips swift-log altogether: see ``Application``.)
struct LineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    let sink: LogSink

    /// Bytes of a message, and of a metadata value, written before the rest is cut off.
    static let messageLimit = 2048
    static let valueLimit = 512

    init(label: String, level: Logger.Level, sink: LogSink = .standardError) {
        self.label = label
        self.logLevel = level
        self.sink = sink
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = event.metadata ?? [:]
        if !metadata.isEmpty || metadataProvider != nil {
            merged = metadata
            if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
            if let extra = event.metadata { merged.merge(extra) { $1 } }
        }
        // The message and the values are rendered before the sink's lock is taken: a
        // `description` that logs (or is slow) must not run while the lock is held.
        // Every piece is escaped and bounded (`appendEscaped`): messages and values carry what
        // clients sent (a method, a path, a store's error about their input), and a control
        // character must not reach an operator's terminal, nor a newline forge a line.
        var text: [UInt8] = []
        text.appendEscaped(event.message.description, limit: Self.messageLimit)
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            text.append(UInt8(ascii: " "))
            text.appendEscaped(key, limit: Self.valueLimit)
            text.append(UInt8(ascii: "="))
            switch value {
            case .string(let string): text.appendEscaped(string, limit: Self.valueLimit)
            case .stringConvertible(let convertible): text.appendEscaped(convertible.description, limit: Self.valueLimit)
            default: text.appendEscaped(value.description, limit: Self.valueLimit)
            }
        }
        sink.writeLine(level: event.level, label: label) { line in line.append(contentsOf: text) }
    }
}
