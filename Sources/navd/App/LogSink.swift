import Logging
import NavJSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Standard error, written in batches, one line per log event:
/// `2026-11-22T01:28:04Z info navd: request method=GET …`.
///
/// A request log line written with its own `write(2)` cost about a tenth of a `GET`'s time.
/// Lines up to `info` (the request log among them) collect in a buffer that goes out when it
/// holds ``batchBytes``, when a line at `notice` or above arrives (after the lines before it,
/// so the order is kept), and on ``flush()``, which `navd serve` calls every 100 ms and on
/// its way out. So an `info` line reaches the log at most about 100 ms late, and a `kill -9`
/// can lose the last such lines — never a warning or an error.
///
/// A line is written straight into the buffer under its lock, timestamp first (UTC, to the
/// second, formatted at most once a second), with no string or array of its own.
final class LogSink: Sendable {
    static let standardError = LogSink(descriptor: 2)

    /// A buffer this full is written at once.
    let batchBytes = 16 * 1024
    private let descriptor: Int32
    private let state = Mutex<State>(State())

    private struct State {
        var buffer: [UInt8] = []
        /// The second `stamp` was formatted for, and `2026-11-22T01:28:04Z`.
        var second = -1
        var stamp: [UInt8] = []
    }

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Adds the line `TIMESTAMP LEVEL LABEL: ` + what `body` appends + a newline. A line at
    /// `notice` or above goes out at once, with everything before it. `body` runs under the
    /// sink's lock: it only appends bytes already at hand, and never logs.
    func writeLine(level: Logger.Level, label: String, _ body: (inout [UInt8]) -> Void) {
        state.withLock { state in
            // Read under the lock, so stamps never go backwards from one line to the next.
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            if state.second != now.tv_sec {
                state.second = now.tv_sec
                state.stamp = Self.timestamp(second: now.tv_sec)
            }
            state.buffer.append(contentsOf: state.stamp)
            state.buffer.append(UInt8(ascii: " "))
            state.buffer.appendUTF8(level.rawValue)
            state.buffer.append(UInt8(ascii: " "))
            state.buffer.appendUTF8(label)
            state.buffer.appendLiteral(": ")
            body(&state.buffer)
            state.buffer.append(UInt8(ascii: "\n"))
            if level >= .notice || state.buffer.count >= batchBytes { drain(&state.buffer) }
        }
    }

    /// Writes whatever is buffered.
    func flush() {
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

    /// `2026-11-22T01:28:04Z` for a second of the Unix epoch.
    static func timestamp(second: Int) -> [UInt8] {
        var time = second
        var parts = tm()
        gmtime_r(&time, &parts)
        var text: [UInt8] = []
        text.reserveCapacity(20)
        text.appendDecimal(Int(parts.tm_year) + 1900, width: 4)
        text.append(UInt8(ascii: "-"))
        text.appendDecimal(Int(parts.tm_mon) + 1, width: 2)
        text.append(UInt8(ascii: "-"))
        text.appendDecimal(Int(parts.tm_mday), width: 2)
        text.append(UInt8(ascii: "T"))
        text.appendDecimal(Int(parts.tm_hour), width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendDecimal(Int(parts.tm_min), width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendDecimal(Int(parts.tm_sec), width: 2)
        text.append(UInt8(ascii: "Z"))
        return text
    }
}
