#if canImport(Glibc)
import Glibc
#endif

package enum FileSystem {
    /// `mkdir -p` of the folder holding `path`.
    static func createParentDirectory(of path: String) throws(StoreError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let folder = String(path[..<slash])
        var current = folder.hasPrefix("/") ? "" : "."
        for part in folder.split(separator: "/") where part != "." {
            current += "/" + part
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw StoreError(message: "cannot create folder \(current): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// An exclusive advisory lock (`flock`) on a file of its own, held until `release()`:
/// it says "this process owns the store" without touching the locks SQLite keeps on its files.
package final class OwnershipLock: @unchecked Sendable {
    private(set) var descriptor: Int32

    /// - Throws: when another process holds the lock.
    package init(path: String, owner: String) throws(StoreError) {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreError(message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "another process (another navd?) is using \(owner)" : String(cString: strerror(errno))
            Glibc.close(descriptor)
            descriptor = -1
            throw StoreError(message: "cannot lock \(path): \(reason)")
        }
    }

    package func release() {
        guard descriptor >= 0 else { return }
        // Unlocked explicitly, not only by closing: a flock belongs to the open file description,
        // and a process forked meanwhile (a test spawning navd, a hook) holds that description
        // until its exec closes it, so a close alone could leave the file locked for a moment
        // after the store has gone, and a store reopened then was refused ("another process").
        flock(descriptor, LOCK_UN)
        Glibc.close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
