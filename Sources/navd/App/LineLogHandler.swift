import Logging

/// One line per log event on standard error: `2026-11-22T01:28:04Z info navd: graph loaded file=…`.
///
/// swift-log's `StreamLogHandler` formats its timestamp with two `strftime` calls and copies
/// metadata through several strings for every event. This writes the message and the metadata
/// (keys sorted) straight into ``LogSink``'s buffer, which stamps the line and writes `info`
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
        let fields = merged.isEmpty ? [] : merged.sorted(by: { $0.key < $1.key })
        sink.writeLine(level: event.level, label: label) { line in
            line.appendUTF8(event.message.description)
            for (key, value) in fields {
                line.append(UInt8(ascii: " "))
                line.appendUTF8(key)
                line.append(UInt8(ascii: "="))
                switch value {
                case .string(let text): line.appendUTF8(text)
                case .stringConvertible(let convertible): line.appendUTF8(convertible.description)
                default: line.appendUTF8(value.description)
                }
            }
        }
    }
}
