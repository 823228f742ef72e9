import Foundation
@testable import NavServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One process per store file: the lock is held while the store is open, and gone the moment it
/// is closed — even when another reference to the lock file's open description lives on, as it
/// does in a process forked at that moment (between its fork and its exec).
@Suite struct OwnershipLockTests {
    @Test func aSecondHolderIsRefusedWhileTheFirstHoldsIt() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db.lock"
        let first = try OwnershipLock(path: path, owner: "test")
        #expect(throws: StoreError.self) { try OwnershipLock(path: path, owner: "test") }
        first.release()
        let second = try OwnershipLock(path: path, owner: "test")
        second.release()
    }

    @Test func releasingUnlocksEvenWhileAForkedCopyOfTheDescriptionLivesOn() throws {
        let folder = try TemporaryFolder()
        let path = "\(folder.path)/navd.db.lock"
        let first = try OwnershipLock(path: path, owner: "test")
        // What a process forked now holds: another descriptor of the same open file description.
        let inherited = dup(first.descriptor)
        #expect(inherited >= 0)
        defer { close(inherited) }
        first.release()
        // The store is closed: reopening it must not find its own old lock still held.
        let second = try OwnershipLock(path: path, owner: "test")
        second.release()
    }
}
