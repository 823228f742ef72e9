import Dispatch
import NavJSON
import NavSessions
import Synchronization

/// Which process delivers to an endpoint, when several share a store: the one whose lease
/// (`webhook-lease:<name>` = `<owner> <expiry ms>`) is current. Taken when absent or expired and
/// renewed by its holder, each a compare-and-set on the value read, so two processes never both
/// hold it; renewed every few seconds, it outlives its holder's death by at most its expiry. A
/// holder that cannot renew it (the store unreachable) stops delivering when it would have
/// expired.
final class WebhookLease: Sendable {
    let key: String
    let owner: String
    private let meta: any MetaStore
    /// How long a lease lasts unrenewed, in ms.
    private let expiry: Int64
    private let now: @Sendable () -> Int64
    private let held = Mutex(Held())
    private let queue: DispatchQueue
    private let timer = Mutex<TimerBox?>(nil)

    private struct Held {
        /// The value this process wrote, and until when it holds (ms); nil when it does not.
        var value: String?
        var until: Int64 = 0
        /// Counts the times the lease was taken: a new term means the position may have moved.
        var term = 0
    }

    init(key: String, owner: String, meta: any MetaStore, expiry: Int64, now: @escaping @Sendable () -> Int64) {
        self.key = key
        self.owner = owner
        self.meta = meta
        self.expiry = expiry
        self.now = now
        queue = DispatchQueue(label: "navd." + key)
    }

    /// Whether this process holds the lease now.
    var isHeld: Bool { term >= 0 }

    /// The term of the lease this process holds now, -1 when it holds none.
    var term: Int {
        let time = now()
        return held.withLock { $0.value != nil && time < $0.until ? $0.term : -1 }
    }

    /// Takes or renews the lease now and then `every` so often.
    func start(every interval: Duration) {
        let source = DispatchSource.makeTimerSource(queue: queue)
        let milliseconds = Int(max(interval.milliseconds, 10))
        source.schedule(deadline: .now(), repeating: .milliseconds(milliseconds), leeway: .milliseconds(milliseconds / 10))
        source.setEventHandler { [self] in renew() }
        source.resume()
        timer.withLock { $0 = TimerBox(source: source) }
    }

    /// Stops renewing, and gives the lease up so that another process can take it at once.
    func stop() {
        timer.withLock { box in
            box?.source.cancel()
            box = nil
        }
        queue.sync {
            let value = held.withLock { held -> String? in
                defer { held.value = nil }
                return held.value
            }
            if let value { _ = try? meta.replaceMetaValue(key, with: nil, ifCurrent: value) }
        }
    }

    /// One round: renews a lease held, takes one absent or expired.
    func renew() {
        let time = now()
        let mine = held.withLock { $0.value }
        do {
            let current = try meta.metaValue(key)
            if let current, current != mine, let other = Self.parse(current), other.owner != owner, other.expiry > time {
                // Another process holds it.
                held.withLock { $0.value = nil }
                return
            }
            let value = owner + " " + String(time + expiry)
            if try meta.replaceMetaValue(key, with: value, ifCurrent: current) {
                held.withLock { held in
                    if held.value == nil || held.value != current { held.term += 1 }
                    held.value = value
                    held.until = time + expiry
                }
            } else {
                held.withLock { $0.value = nil }
            }
        } catch {
            // Kept until it would expire: the store may answer again before then.
        }
    }

    /// `<owner> <expiry ms>`.
    static func parse(_ value: String) -> (owner: String, expiry: Int64)? {
        guard let space = value.lastIndex(of: " ") else { return nil }
        guard let expiry = DecimalDigits.parse(value[value.index(after: space)...].utf8, leadingZeros: true) else { return nil }
        return (String(value[..<space]), Int64(expiry))
    }
}

/// A timer source, used only under its owner's mutex (Dispatch's sources are thread-safe).
private struct TimerBox: @unchecked Sendable {
    let source: any DispatchSourceTimer
}
