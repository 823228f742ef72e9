import Logging
import NavJSON
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a log record is written: one line each way.
package enum LogFormat: String, Sendable, CaseIterable {
    /// logfmt: `ts=2026-11-22T01:28:04.123Z level=info logger=navd msg="graph loaded" file=news.json`.
    case text
    /// One JSON object a line: `{"ts":"2026-11-22T01:28:04.123Z","level":"info","logger":"navd","msg":"graph loaded","file":"news.json"}`.
    case json
}

/// Standard error, written in batches, one line per log record (``LogFormat``):
/// `ts=2026-11-22T01:28:04.123Z level=info logger=navd msg=request method=GET …`.
///
/// A request log line written with its own `write(2)` cost about a tenth of a `GET`'s time.
/// Lines up to `info` (the request log among them) collect in a buffer that goes out when it
/// holds ``batchBytes``, when a line at `notice` or above arrives (after the lines before it,
/// so the order is kept), and on ``flush()``, which `navd serve` calls every 100 ms and on
/// its way out. So an `info` line reaches the log at most about 100 ms late, and a `kill -9`
/// can lose the last such lines — never a warning or an error.
///
/// A line is written straight into the buffer under its lock, timestamp first (UTC, to the
/// millisecond; the part up to the second formatted at most once a second), with no string or
/// array of its own.
package final class LogSink: Sendable {
    package static let standardError = LogSink(descriptor: 2)

    /// A buffer this full is written at once.
    let batchBytes = 16 * 1024
    private let descriptor: Int32
    private let state: Mutex<State>

    private struct State {
        var buffer: [UInt8] = []
        var format: LogFormat
        /// The second `stamp` was formatted for, and `2026-11-22T01:28:04`.
        var second = -1
        var stamp: [UInt8] = []
    }

    init(descriptor: Int32, format: LogFormat = .text) {
        self.descriptor = descriptor
        self.state = Mutex(State(format: format))
    }

    /// How lines are written from now on (`--log-format`).
    package var format: LogFormat {
        get { state.withLock { $0.format } }
        set { state.withLock { $0.format = newValue } }
    }

    /// Adds one record: the timestamp, `level`, `label` and `message`, then the fields `body`
    /// writes, as one line. A line at `notice` or above goes out at once, with everything before
    /// it. `body` runs under the sink's lock: it only appends values already at hand, and never logs.
    func writeLine(level: Logger.Level, label: String, message: String, _ body: (inout LogLine) -> Void = { _ in }) {
        state.withLock { state in
            // Read under the lock, so stamps never go backwards from one line to the next.
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            if state.second != now.tv_sec {
                state.second = now.tv_sec
                state.stamp = Self.timestamp(second: now.tv_sec)
            }
            var line = LogLine(bytes: state.buffer, format: state.format)
            state.buffer = []
            line.open(stamp: state.stamp, milliseconds: now.tv_nsec / 1_000_000, level: level, label: label, message: message)
            body(&line)
            line.close()
            state.buffer = line.bytes
            if level >= .notice || state.buffer.count >= batchBytes { drain(&state.buffer) }
        }
    }

    /// Writes whatever is buffered.
    package func flush() {
        state.withLock { state in
            if !state.buffer.isEmpty { drain(&state.buffer) }
        }
    }

    /// Written under the lock, so batches never overtake each other.
    private func drain(_ buffer: inout [UInt8]) {
        buffer.withUnsafeBufferPointer { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { break }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// `2026-11-22T01:28:04` for a second of the Unix epoch (UTC; the milliseconds and `Z`
    /// follow on each line).
    static func timestamp(second: Int) -> [UInt8] {
        Timestamp.bytes(milliseconds: Int64(second) * 1000, withMilliseconds: false)
    }
}

/// One log record being written into a ``LogSink``'s buffer, in its format: fields are added
/// by ``field(_:_:limit:)`` and its siblings, each key once.
///
/// Text is logfmt: `key=value`, the value in double quotes when it is empty or holds a space,
/// `=`, `"`, a backslash, a control character or a non-ASCII byte; inside quotes `"` and `\`
/// are escaped with a backslash, and control and non-ASCII bytes are written `\xHH` (as Go's
/// `strconv.Unquote`, which logfmt parsers use, reads them), so a line is printable ASCII and
/// no client text can forge a line or reach a terminal as an escape sequence. JSON is an object
/// with `ts`, `level`, `logger`, `msg` first; its strings escape `"`, `\` and control
/// characters (`\u00XX`) and keep other text as UTF-8.
/// A value longer than its limit is cut (at a character boundary) and ends in `...(N bytes)`.
struct LogLine {
    fileprivate(set) var bytes: [UInt8]
    let format: LogFormat

    /// Bytes of a message, and of a value, written before the rest is cut off.
    static let messageLimit = 2048
    static let valueLimit = 512

    fileprivate mutating func open(stamp: [UInt8], milliseconds: Int, level: Logger.Level, label: String, message: String) {
        switch format {
        case .text: bytes.appendLiteral("ts=")
        case .json: bytes.appendLiteral("{\"ts\":\"")
        }
        bytes.append(contentsOf: stamp)
        bytes.append(UInt8(ascii: "."))
        bytes.appendDecimal(milliseconds, width: 3)
        bytes.append(UInt8(ascii: "Z"))
        if format == .json { bytes.append(UInt8(ascii: "\"")) }
        field("level", level.rawValue)
        field("logger", label)
        field("msg", message, limit: Self.messageLimit)
    }

    fileprivate mutating func close() {
        if format == .json { bytes.append(UInt8(ascii: "}")) }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A key the code writes: name bytes, copied as they are.
    private mutating func key(_ key: StaticString) {
        switch format {
        case .text:
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            bytes.append(UInt8(ascii: "="))
        case .json:
            self.key(key.description)
        }
    }

    /// A key from elsewhere (a log record's metadata): any string.
    private mutating func key(_ key: String) {
        switch format {
        case .text:
            bytes.append(UInt8(ascii: " "))
            // Keys come from the code, but a metadata key is any string: only name bytes are kept.
            // A key of name bytes (every key the code writes) is copied whole, not byte by byte:
            // a request's line has a dozen of them.
            var key = key
            key.withUTF8 { utf8 in
                let kept = UnsafeBufferPointer(rebasing: utf8.prefix(64))
                if kept.allSatisfy(Self.isNameByte) {
                    bytes.append(contentsOf: kept)
                } else {
                    for byte in kept { bytes.append(Self.isNameByte(byte) ? byte : UInt8(ascii: "_")) }
                }
            }
            bytes.append(UInt8(ascii: "="))
        case .json:
            bytes.append(UInt8(ascii: ","))
            appendValue(key, limit: 64, json: true)
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// A text field, escaped and bounded.
    mutating func field(_ key: StaticString, _ value: String, limit: Int = LogLine.valueLimit) {
        self.key(key)
        self.value(value, limit: limit)
    }

    /// A field of a record's metadata: its key is any string.
    mutating func metadata(_ key: String, _ value: String, limit: Int = LogLine.valueLimit) {
        self.key(key)
        self.value(value, limit: limit)
    }

    private mutating func value(_ value: String, limit: Int) {
        appendValue(value, limit: limit, json: format == .json)
    }

    /// A whole number (a JSON number).
    mutating func field(_ key: StaticString, number: Int) {
        self.key(key)
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        bytes.appendDecimal(Int(clamping: number.magnitude))
    }

    /// A number with one decimal, from its tenths: `tenths: 3` → `0.3` (a JSON number).
    mutating func field(_ key: StaticString, tenths: Int) {
        self.key(key)
        let tenths = max(0, tenths)
        bytes.appendDecimal(tenths / 10)
        bytes.append(UInt8(ascii: "."))
        bytes.appendDecimal(tenths % 10)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "-")
    }

    /// The bytes of `text` shown under `limit`, cut back to a character boundary.
    private static func shownCount(_ utf8: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
        guard utf8.count > limit else { return utf8.count }
        var end = max(0, limit)
        while end > 0, utf8[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    private mutating func appendCut(_ total: Int) {
        bytes.appendLiteral("...(")
        bytes.appendDecimal(total)
        bytes.appendLiteral(" bytes)")
    }

    /// `text` as a value of the line's format, the one escaper of a log line: in logfmt, bare when
    /// it is printable ASCII with nothing logfmt reads (`=`, `"`, `\`, a blank), else quoted;
    /// in JSON, a string. Inside quotes `"` and `\` are escaped, and every other byte that is not
    /// printable ASCII is written as an escape (`\xHH` in logfmt, so a terminal obeys no control
    /// character and non-ASCII shows byte by byte; `\u00HH` in JSON for control characters, whose
    /// UTF-8 text stays as it is). At most `limit` bytes are shown, cut at a character boundary,
    /// then `...(N bytes)` with the full size.
    private mutating func appendValue(_ text: String, limit: Int, json: Bool) {
        var text = text
        text.withUTF8 { utf8 in
            let shown = Self.shownCount(utf8, limit: limit)
            let bare =
                !json && shown == utf8.count && shown > 0
                && utf8.allSatisfy {
                    $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
                }
            if bare {
                bytes.append(contentsOf: utf8)
                return
            }
            bytes.append(UInt8(ascii: "\""))
            for byte in utf8[..<shown] {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0x20..<0x7F:
                    bytes.append(byte)
                case 0x80... where json:
                    bytes.append(byte)
                default:
                    if json { bytes.appendLiteral("\\u00") } else { bytes.appendLiteral("\\x") }
                    for nibble in [byte >> 4, byte & 0xF] { bytes.append(nibble < 10 ? 0x30 + nibble : 0x57 + nibble) }
                }
            }
            if shown < utf8.count { appendCut(utf8.count) }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
