import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Standard error, written in batches.
///
/// A request log line written with its own `write(2)` cost about a tenth of a `GET`'s time.
/// Lines up to `info` (the request log among them) collect in a buffer that goes out when it
/// holds ``batchBytes``, when a line at `notice` or above arrives (after the lines before it,
/// so the order is kept), and on ``flush()``, which `navd serve` calls every 100 ms and on
/// its way out. So an `info` line reaches the log at most about 100 ms late, and a `kill -9`
/// can lose the last such lines — never a warning or an error.
final class LogSink: Sendable {
    static let standardError = LogSink(descriptor: 2)

    /// A buffer this full is written at once.
    let batchBytes = 16 * 1024
    private let descriptor: Int32
    private let pending = Mutex<[UInt8]>([])

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Adds one line (with its newline); `urgent` writes it and everything before it now.
    func write(_ line: [UInt8], urgent: Bool) {
        pending.withLock { buffer in
            buffer.append(contentsOf: line)
            if urgent || buffer.count >= batchBytes { drain(&buffer) }
        }
    }

    /// Writes whatever is buffered.
    func flush() {
        pending.withLock { buffer in
            if !buffer.isEmpty { drain(&buffer) }
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
}
