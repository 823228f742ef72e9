import Foundation
import Testing

@testable import NavSessions
@testable import NavTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One process per database file: the lock (on the file itself) is held while the store is open,
/// and gone the moment it is closed — even when another reference to the file's open description
/// lives on, as it does in a process forked at that moment (between its fork and its exec).
@Suite struct DatabaseLockTests {
    @Test func aSecondHolderIsRefusedWhileTheFirstHoldsIt() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let first = try DatabaseLock(path: path)
        do {
            _ = try DatabaseLock(path: path)
            Issue.record("locked twice")
        } catch {
            #expect(error.kind == .inUse)
            #expect(error.message.contains("another navd holds it: PID \(getpid())"), "\(error)")
        }
        first.release()
        let second = try DatabaseLock(path: path)
        second.release()
    }

    @Test func releasingUnlocksEvenWhileAForkedCopyOfTheDescriptionLivesOn() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db"
        let first = try DatabaseLock(path: path)
        // What a process forked now holds: another descriptor of the same open file description.
        let inherited = dup(first.descriptor)
        #expect(inherited >= 0)
        defer { close(inherited) }
        first.release()
        // The store is closed: reopening it must not find its own old lock still held.
        let second = try DatabaseLock(path: path)
        second.release()
    }
}

extension DatabaseLockTests {
    /// `/proc/locks` names the device as glibc's `major`/`minor` split it: checked against a
    /// device number whose parts use the high bits too.
    @Test func aDevicesMajorAndMinorAreSplitAsGlibcDoes() {
        // makedev(0x123, 0x45678): minor's low 8 bits, major's low 12 bits, minor's high bits, major's high bits.
        let device: UInt64 =
            (0x45678 & 0xff) | ((0x123 & 0xfff) << 8) | ((0x45678 & ~UInt64(0xff)) << 12) | ((0x123 & ~UInt64(0xfff)) << 32)
        let identity = FileIdentity(device: device, inode: 7)
        #expect(identity.major == 0x123)
        #expect(identity.minor == 0x45678)
    }
}
