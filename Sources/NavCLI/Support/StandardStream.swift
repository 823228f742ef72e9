#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard output or standard error, written with `write(2)` at once, unbuffered (what the
/// commands used Foundation's `FileHandle` for: a watcher's lines may go to a pipe that someone
/// reads as they come). `print` stays for what is printed through stdio's buffer.
enum StandardStream {
    case output
    case error

    private var descriptor: Int32 {
        switch self {
        case .output: 1
        case .error: 2
        }
    }

    /// Writes every byte, retrying short writes and interrupted calls; an output that cannot be
    /// written to (closed, full disk) is given up on.
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = systemWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Writes `text` and a newline.
    func write(line text: String) {
        write(Array((text + "\n").utf8))
    }
}

/// `write(2)`, named apart from `StandardStream.write`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
    #else
        Darwin.write(descriptor, bytes, count)
    #endif
}
