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
}
