#if canImport(Glibc)
    import Glibc
#endif

package enum FileSystem {
    /// `mkdir -p` of the folder holding `path`.
    package static func createParentDirectory(of path: String) throws(StoreError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let folder = String(path[..<slash])
        var current = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") where part != "." {
            current += "/" + part
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw StoreError(message: "cannot create folder \(current): \(reason(errno))", kind: diskKind(errno))
            }
        }
    }

    /// `path` with every symlink, `.` and `..` resolved (`realpath`): one name of the file, though
    /// a hard link has others.
    package static func realPath(_ path: String) throws(StoreError) -> String {
        guard let resolved = realpath(path, nil) else {
            throw StoreError(message: "cannot resolve \(path): \(reason(errno))")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` as given, its folder resolved (``realPath(_:)``) but not its last component: the
    /// name a navd before the log's location was recorded put the change log under.
    package static func resolvingFolder(of path: String) throws(StoreError) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let resolved = try realPath(folder)
        return (resolved == "/" ? "" : resolved) + "/" + name
    }

    /// The folder part of `path` ("." when it has none).
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The identity of the file `path` names (symlinks followed), or nil when there is none.
    package static func identity(of path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// The system's reason for `code` (`strerror`).
    package static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// A failure the disk may recover from (full, failing, read-only) is `unavailable`.
    static func diskKind(_ code: Int32) -> StoreError.Kind {
        [ENOSPC, EDQUOT, EIO, EROFS].contains(code) ? .unavailable : .failure
    }
}

/// What a file is, whatever it was opened as: its device and inode.
package struct FileIdentity: Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    /// The device's major and minor numbers, as `/proc/locks` prints them (glibc's `major`/`minor`).
    var major: UInt64 { ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff)) }
    var minor: UInt64 { (device & 0xff) | ((device >> 12) & ~UInt64(0xff)) }

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// An exclusive advisory lock (`flock`) on the database file itself, held until `release()`:
/// every name of the file (a symlink, a hard link, a `..` path) opens the same inode, so every
/// name meets the same lock (docs/design.md, "A store is named by what it is").
///
/// On Linux `flock` locks are apart from the POSIX (`fcntl`) locks SQLite takes on the same file,
/// so the two do not meet. The descriptor stays open until the store's connections are closed:
/// closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's too.
package final class DatabaseLock: @unchecked Sendable {
    package private(set) var descriptor: Int32
    /// The database file's identity, read from the locked descriptor.
    package let identity: FileIdentity

    /// Opens (creating if missing) and locks the database file at `path`.
    /// - Throws: an `inUse` error naming the holder's PID when another process holds the lock;
    ///   a failure naming the path and the system's reason when the file cannot be opened.
    package init(path: String) throws(StoreError) {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw StoreError(message: "cannot open the database \(path): \(FileSystem.reason(code))", kind: FileSystem.diskKind(code))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw StoreError(message: "cannot stat the database \(path): \(FileSystem.reason(code))")
        }
        identity = FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = code == EWOULDBLOCK ? Self.holder(of: descriptor, identity, holdingFlock: false) : nil
            Glibc.close(descriptor)
            descriptor = -1
            if code == EWOULDBLOCK { throw Self.inUse(path, holder: holder) }
            throw StoreError(message: "cannot lock the database \(path): \(FileSystem.reason(code))")
        }
    }

    /// What a database another process holds is reported as: in use, with the holder's PID
    /// where it can be known, and never as damage (nothing is wrong with the file).
    package static func inUse(_ path: String, holder: Int32?) -> StoreError {
        let who = holder.map { "another navd holds it: PID \($0)" } ?? "another process holds it (its PID cannot be known here)"
        return StoreError(
            message:
                "the database \(path) is in use: \(who). Nothing was read or changed; stop that process first, or give this one another file",
            kind: .inUse
        )
    }

    /// The PID of the process that holds the database open on `descriptor`'s file: the `flock`
    /// holder `/proc/locks` names for its device and inode, else the holder of a POSIX lock on
    /// it (`F_GETLK`: SQLite's, as a navd that took no `flock` on the file itself holds).
    /// - Parameter holdingFlock: this process holds the `flock` (SQLite's lock is what another
    ///   holds): its own line in `/proc/locks` is not the holder.
    package static func holder(of descriptor: Int32, _ identity: FileIdentity, holdingFlock: Bool) -> Int32? {
        if let pid = flockHolder(identity, skipping: holdingFlock ? getpid() : nil) { return pid }
        var probe = Glibc.flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 0
        guard fcntl(descriptor, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK), probe.l_pid > 0 else { return nil }
        return probe.l_pid
    }

    /// The PID `/proc/locks` gives for a `flock` on the file: lines such as
    /// `3: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF` (the device's major and minor in hex,
    /// the inode in decimal); a waiter's line (`3: -> FLOCK …`) is not a holder.
    static func flockHolder(_ identity: FileIdentity, skipping skipped: Int32?) -> Int32? {
        let descriptor = open("/proc/locks", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 14)
        // Bounded: a machine with more locks than this is not worth reading to the end.
        while bytes.count < 1 << 22 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        let file = String(format16: identity)
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count >= 6, String(decoding: fields[1], as: UTF8.self) == "FLOCK",
                String(decoding: fields[5], as: UTF8.self) == file,
                let pid = Int32(String(decoding: fields[4], as: UTF8.self)), pid > 0,
                pid != skipped
            else { continue }
            return pid
        }
        return nil
    }

    package func release() {
        guard descriptor >= 0 else { return }
        // Unlocked explicitly, not only by closing: a flock belongs to the open file description,
        // and a process forked meanwhile (a test spawning navd, a hook) holds that description
        // until its exec closes it, so a close alone could leave the file locked for a moment
        // after the store has gone, and a store reopened then was refused ("in use").
        flock(descriptor, LOCK_UN)
        Glibc.close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

extension String {
    /// `MAJOR:MINOR:INODE` as `/proc/locks` prints a file (`%02x:%02x:%lu`).
    fileprivate init(format16 identity: FileIdentity) {
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return digits.count < 2 ? "0" + digits : digits
        }
        self = "\(hex(identity.major)):\(hex(identity.minor)):\(identity.inode)"
    }
}
