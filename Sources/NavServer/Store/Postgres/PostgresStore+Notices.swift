import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Changes made through one navd reach the watchers of every other navd on the same database
/// (DESIGN §8 Across processes): each write that changes, deletes or expires a session sends
/// `NOTIFY navd_changes` in its own statement, so PostgreSQL delivers it when (and only if) the
/// change commits — one notice per committed change, the unit of commit here — and every process
/// `LISTEN`s on a connection of its own.
///
/// A notice's payload is `<process tag> <session id> changed <last seq>`, `… deleted` or
/// `… expired`. It says only which session moved: a watcher reads what it missed from the store
/// (deduplicated by seq), so a notice lost or repeated costs a read, never an event.
extension PostgresStore {
    /// The payload of a notice about `id` from this process.
    func notice(_ id: String, _ what: String) -> String {
        processTag + " " + id + " " + what
    }

    /// Parses a notice; nil for this process's own and for anything malformed.
    func parse(_ payload: String) -> ChangeNotice? {
        let parts = payload.split(separator: " ")
        guard parts.count >= 3, parts[0] != processTag, SessionID.isValid(String(parts[1])) else { return nil }
        let id = String(parts[1])
        switch parts[2] {
        case "changed": return parts.count == 4 ? Int(parts[3]).map { ChangeNotice(id: id, kind: .changed(lastSeq: $0)) } : nil
        case "deleted": return ChangeNotice(id: id, kind: .deleted)
        case "expired": return ChangeNotice(id: id, kind: .expired)
        default: return nil
        }
    }

    package func follow(_ handler: @escaping @Sendable (ChangeNotice?) -> Void) {
        // A connection of its own, blocked in poll() most of the time: a queue of its own too.
        DispatchQueue(label: "navd.postgres.notices").async { [self] in
            var connection: PostgresConnection?
            var backoff: UInt32 = 100_000
            while !closing.load(ordering: .relaxed) {
                do throws(StoreError) {
                    if connection == nil {
                        let fresh = try PostgresConnection(conninfo: url)
                        try fresh.execute("LISTEN navd_changes")
                        connection = fresh
                        backoff = 100_000
                        // Notices sent while nobody listened are gone: everyone looks in the store.
                        handler(nil)
                    }
                    for payload in try connection?.notifications(waitingUpTo: 250) ?? [] {
                        if let notice = parse(payload) { handler(notice) }
                    }
                } catch {
                    connection?.close()
                    connection = nil
                    usleep(backoff)
                    backoff = min(backoff * 2, 2_000_000)
                }
            }
            connection?.close()
        }
    }
}
