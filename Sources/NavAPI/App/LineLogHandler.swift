import Logging
import NavJSON

/// One line per log record on standard error, in the sink's ``LogFormat``:
/// `ts=2026-11-22T01:28:04.123Z level=info logger=navd msg="graph loaded" file=…` (logfmt) or a
/// JSON object.
///
/// swift-log's `StreamLogHandler` formats its timestamp with two `strftime` calls and copies
/// metadata through several strings for every record. This renders the message and the metadata
/// (keys sorted) into ``LogSink``'s buffer, which stamps the line and writes `info` lines in
/// batches. (The request log skips swift-log altogether: see ``Application``.) Any other
/// swift-log backend can take its place (``runNavd(logHandler:)``).
package struct LineLogHandler: LogHandler {
    let label: String
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package let sink: LogSink

    /// Fields navd writes on every line; a metadata key of the same name is written with a `_`
    /// in front, so that it neither hides them nor repeats a JSON key.
    static let reservedKeys: Set<String> = ["ts", "level", "logger", "msg"]

    package init(label: String, level: Logger.Level, sink: LogSink = .standardError) {
        self.label = label
        self.logLevel = level
        self.sink = sink
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = event.metadata ?? [:]
        if !metadata.isEmpty || metadataProvider != nil {
            merged = metadata
            if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
            if let extra = event.metadata { merged.merge(extra) { $1 } }
        }
        // The message and the values are rendered before the sink's lock is taken: a
        // `description` that logs (or is slow) must not run while the lock is held.
        // Every piece is escaped and bounded (`LogLine`): messages and values carry what
        // clients sent (a method, a path, a store's error about their input), and a control
        // character must not reach an operator's terminal, nor a newline forge a line.
        let message = event.message.description
        let fields = merged.sorted(by: { $0.key < $1.key }).map { key, value -> (String, String) in
            let name = Self.reservedKeys.contains(key) ? "_" + key : key
            switch value {
            case .string(let string): return (name, string)
            case .stringConvertible(let convertible): return (name, convertible.description)
            default: return (name, value.description)
            }
        }
        sink.writeLine(level: event.level, label: label, message: message) { line in
            for (key, value) in fields { line.metadata(key, value) }
        }
    }
}
