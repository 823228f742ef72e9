import Logging

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
        var text: [UInt8] = []
        text.appendUTF8(event.message.description)
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            text.append(UInt8(ascii: " "))
            text.appendUTF8(key)
            text.append(UInt8(ascii: "="))
            switch value {
            case .string(let string): text.appendUTF8(string)
            case .stringConvertible(let convertible): text.appendUTF8(convertible.description)
            default: text.appendUTF8(value.description)
            }
        }
        sink.writeLine(level: event.level, label: label) { line in line.append(contentsOf: text) }
    }
}
