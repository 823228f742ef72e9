import Synchronization

/// Whether the daemon takes new work; false once shutdown has begun.
final class Readiness: Sendable {
    private let flag = Atomic<Bool>(true)

    var isReady: Bool { flag.load(ordering: .relaxed) }

    func drain() {
        flag.store(false, ordering: .relaxed)
    }
}
