#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a failed file operation says to a user: the system's reason (`strerror`), such as
/// "No such file or directory". FoundationEssentials, which the commands use for files, has no
/// `localizedDescription`; its errors print as `CocoaError(code: …, userInfo: …)`, which is
/// for programmers.
enum SystemErrorText {
    static func describe(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return reason(posix.code.rawValue) }
        if let cocoa = error as? CocoaError {
            if let posix = cocoa.underlying as? POSIXError { return reason(posix.code.rawValue) }
            return "file operation failed (Cocoa error \(cocoa.code.rawValue))"
        }
        return "\(error)"
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Why a file could not be read: the system's reason.
    struct ReadFailure: Error {
        var reason: String
    }

    /// The bytes of the file at `path`, read with the system calls themselves, so that a failure
    /// says why ("No such file or directory", "Permission denied", "Is a directory"): Foundation's
    /// `contents(atPath:)` answers only nil.
    static func contents(of path: String) throws(ReadFailure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ReadFailure(reason: reason(errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ReadFailure(reason: reason(errno)) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
