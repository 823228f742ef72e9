import CSQLite
import Dispatch
import Synchronization

@testable import NavSessions
@testable import NavStoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The change log's system calls, failing on demand with an `errno` (`ENOSPC` as a full disk,
/// `EIO` as a failing one) and passing through to the real ones otherwise.
final class ChangeLogFaults: ChangeLogFiles {
    private let failures = Mutex<(write: Int32?, sync: Int32?)>((nil, nil))
    /// The next `pwrite` to wait for ``releaseHeldWrite()`` and then fail with this `errno`.
    private let held = Mutex<Int32?>(nil)
    private let holding = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// The next `pwrite` waits, holding its place in the log (and the append lock), until
    /// ``releaseHeldWrite()``, then fails with `code`.
    func holdNextWrite(failingWith code: Int32) { held.withLock { $0 = code } }
    /// Waits until a write is held (at most `seconds`); whether one is.
    func waitUntilHeld(seconds: Double = 10) -> Bool { holding.wait(timeout: .now() + seconds) == .success }
    func releaseHeldWrite() { released.signal() }

    /// Every `pwrite` fails with `code` (nil: none does).
    func failWrites(_ code: Int32?) { failures.withLock { $0.write = code } }
    /// Every `fdatasync` fails with `code` (nil: none does).
    func failSyncs(_ code: Int32?) { failures.withLock { $0.sync = code } }

    func heal() { failures.withLock { $0 = (nil, nil) } }

    func pwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int {
        let hold = held.withLock { code in
            defer { code = nil }
            return code
        }
        if let code = hold {
            holding.signal()
            released.wait()
            errno = code
            return -1
        }
        if let code = failures.withLock({ $0.write }) {
            errno = code
            return -1
        }
        return Glibc.pwrite(descriptor, bytes, count, offset)
    }

    func fdatasync(_ descriptor: Int32) -> Int32 {
        if let code = failures.withLock({ $0.sync }) {
            errno = code
            return -1
        }
        return Glibc.fdatasync(descriptor)
    }
}

/// SQLite's own writes, failing on demand for the files under one folder: the unix VFS lets a
/// program replace the system calls it makes (`xSetSystemCall`, SQLite's hook for exactly this
/// kind of test). The replacements are installed once for the test process and pass through
/// unless a folder is armed, so tests on other folders running at the same time are unaffected.
enum SQLiteFaults {
    typealias Write = @convention(c) (Int32, UnsafeRawPointer?, Int) -> Int
    typealias PositionedWrite = @convention(c) (Int32, UnsafeRawPointer?, Int, off_t) -> Int

    /// Armed folders and the `errno` their files' writes fail with.
    fileprivate static let armed = Mutex<[String: Int32]>([:])
    // Written once, by `installed`, before any replacement can run.
    nonisolated(unsafe) fileprivate static var write: Write?
    nonisolated(unsafe) fileprivate static var pwrite: PositionedWrite?
    nonisolated(unsafe) fileprivate static var pwrite64: PositionedWrite?

    /// Which calls were replaced (SQLite writes with one of them, depending on how it was built).
    static let installed: [String] = {
        guard let vfs = sqlite3_vfs_find("unix"), let set = vfs.pointee.xSetSystemCall, let get = vfs.pointee.xGetSystemCall else {
            return []
        }
        var replaced: [String] = []
        if let original = get(vfs, "write") {
            write = unsafeBitCast(original, to: Write.self)
            let replacement: Write = faultyWrite
            if set(vfs, "write", unsafeBitCast(replacement, to: sqlite3_syscall_ptr.self)) == SQLITE_OK { replaced.append("write") }
        }
        for name in ["pwrite", "pwrite64"] {
            guard let original = get(vfs, name) else { continue }
            let replacement: PositionedWrite
            if name == "pwrite" {
                pwrite = unsafeBitCast(original, to: PositionedWrite.self)
                replacement = faultyPwrite
            } else {
                pwrite64 = unsafeBitCast(original, to: PositionedWrite.self)
                replacement = faultyPwrite64
            }
            if set(vfs, name, unsafeBitCast(replacement, to: sqlite3_syscall_ptr.self)) == SQLITE_OK { replaced.append(name) }
        }
        return replaced
    }()

    /// From now on, SQLite's writes to files under `folder` fail with `code`.
    static func fail(under folder: String, with code: Int32) {
        _ = installed
        armed.withLock { $0[folder] = code }
    }

    static func heal(_ folder: String) {
        armed.withLock { $0[folder] = nil }
    }

    /// The `errno` a write to `descriptor` fails with, if its file is under an armed folder.
    fileprivate static func failure(for descriptor: Int32) -> Int32? {
        let folders = armed.withLock { $0 }
        guard !folders.isEmpty else { return nil }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, 4095)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return folders.first { path.hasPrefix($0.key + "/") }?.value
    }
}

private func faultyWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    if let code = SQLiteFaults.failure(for: descriptor) {
        errno = code
        return -1
    }
    return SQLiteFaults.write?(descriptor, bytes, count) ?? -1
}

private func faultyPwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int {
    if let code = SQLiteFaults.failure(for: descriptor) {
        errno = code
        return -1
    }
    return SQLiteFaults.pwrite?(descriptor, bytes, count, offset) ?? -1
}

private func faultyPwrite64(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int {
    if let code = SQLiteFaults.failure(for: descriptor) {
        errno = code
        return -1
    }
    return SQLiteFaults.pwrite64?(descriptor, bytes, count, offset) ?? -1
}
