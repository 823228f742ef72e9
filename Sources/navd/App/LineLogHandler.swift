import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One line per log event on standard error: `2026-11-22T01:28:04Z info navd: request method=GET …`.
///
/// swift-log's `StreamLogHandler` formats its timestamp with two `strftime` calls and copies
/// metadata through several strings for every event; with a line per request that was a tenth of
/// a request's instructions. This builds the same line as bytes, formats the timestamp once per
/// second, and hands the line to ``LogSink``, which writes `info` lines in batches.
struct LineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line: [UInt8] = []
        line.reserveCapacity(192)
        line.append(contentsOf: Self.timestamp().utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: label.utf8)
        line.append(contentsOf: ": ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        var merged = event.metadata ?? [:]
        if !metadata.isEmpty || metadataProvider != nil {
            merged = metadata
            if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
            if let extra = event.metadata { merged.merge(extra) { $1 } }
        }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            switch value {
            case .string(let text): line.append(contentsOf: text.utf8)
            case .stringConvertible(let convertible): line.append(contentsOf: convertible.description.utf8)
            default: line.append(contentsOf: value.description.utf8)
            }
        }
        line.append(UInt8(ascii: "\n"))
        LogSink.standardError.write(line, urgent: event.level >= .notice)
    }

    private static let cached = Mutex<(second: Int, text: String)>((-1, ""))

    /// UTC, to the second, formatted at most once per second.
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = now.tv_sec
        return cached.withLock { cache in
            if cache.second == second { return cache.text }
            var time = second
            var parts = tm()
            gmtime_r(&time, &parts)
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let text = "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
            cache = (second, text)
            return text
        }
    }
}
