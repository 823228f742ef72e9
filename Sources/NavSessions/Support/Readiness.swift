import Synchronization

/// Whether the daemon takes new work: false once shutdown has begun, or while its store cannot
/// be reached (a load balancer then sends the work to another instance).
package final class Readiness: Sendable {
    private let flag = Atomic<Bool>(true)
    /// Answers whether the store takes work now (``SessionStore/isAvailable()``: PostgreSQL runs
    /// `SELECT 1`, SQLite probes the disk after a failed write, memory is always available).
    /// Asked at most once per ``probeInterval``: the one throttle for every store.
    private let probe: (@Sendable () -> Bool)?
    /// The last probe's time (monotonic seconds) and answer.
    private let probed = Mutex<(at: Double, reachable: Bool)>((-.infinity, true))
    /// How long a probe's answer is reused: `/readyz` polled by many balancers costs the store
    /// one query a second.
    static let probeInterval: Double = 1

    package init(probe: (@Sendable () -> Bool)? = nil) {
        self.probe = probe
    }

    package var isReady: Bool { flag.load(ordering: .relaxed) }

    /// Whether the store answered its last probe, probing again when that answer is older than
    /// ``probeInterval``. One caller probes; the others answer with the previous result meanwhile.
    package var storeIsReachable: Bool {
        guard let probe else { return true }
        let now = Clock.seconds()
        let (due, last) = probed.withLock { probed -> (Bool, Bool) in
            guard now - probed.at >= Self.probeInterval else { return (false, probed.reachable) }
            probed.at = now
            return (true, probed.reachable)
        }
        guard due else { return last }
        let reachable = probe()
        probed.withLock { $0.reachable = reachable }
        return reachable
    }

    package func drain() {
        flag.store(false, ordering: .relaxed)
    }
}
