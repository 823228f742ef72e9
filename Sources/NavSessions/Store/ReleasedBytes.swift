import Synchronization

/// Bytes a store has let go, until the service takes them (``SessionStore/takeReleasedEventBytes()``):
/// one atomic, so a store adds to it under whatever lock it holds, and the service takes it
/// without one.
package final class ReleasedBytes: Sendable {
    private let bytes = Atomic<Int>(0)

    package init() {}

    package func add(_ amount: Int) {
        guard amount != 0 else { return }
        bytes.wrappingAdd(amount, ordering: .relaxed)
    }

    /// What was added since the last call.
    package func take() -> Int {
        bytes.exchange(0, ordering: .relaxed)
    }
}
