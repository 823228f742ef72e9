import Dispatch
import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// Changes made through one navd reach the watchers of every other navd on the same database
/// (docs/design.md, "Across processes"): each committed group of changes sends one `NOTIFY navd_changes`
/// naming every session it changed, once it has committed (``PostgresStore/notify(_:_:)``:
/// not inside the group, where NOTIFY's lock would serialise the commits); each deletion or expiry
/// sends its own in its statement. Every process `LISTEN`s on a connection of its own.
///
/// A notice's payload is `<process tag> changes <session id>:<last seq> …` (one pair per changed
/// session of the group; navd before group commit sent `<process tag> <session id> changed <last
/// seq>`, still understood), or `<process tag> <session id> deleted` / `… expired`. It says only
/// which sessions moved: a watcher reads what it missed from the store (deduplicated by seq), so a
/// notice lost or repeated costs a read, never an event. A notice also drops its sessions from
/// this process's cache of sessions (``PostgresSessionCache``), so its next change reads first.
extension PostgresStore {
    /// The payload of a notice about `id` from this process.
    func notice(_ id: String, _ what: String) -> String {
        processTag + " " + id + " " + what
    }

    /// Parses a notice; nothing for this process's own and for anything malformed.
    func parse(_ payload: String) -> [ChangeNotice] {
        let parts = payload.split(separator: " ")
        guard parts.count >= 3, parts[0] != processTag else { return [] }
        if parts[1] == "changes" {
            return parts.dropFirst(2).compactMap { pair in
                guard let colon = pair.firstIndex(of: ":"), let seq = Int(pair[pair.index(after: colon)...]) else { return nil }
                let id = String(pair[..<colon])
                return SessionID.isValid(id) ? ChangeNotice(id: id, kind: .changed(lastSeq: seq)) : nil
            }
        }
        guard SessionID.isValid(String(parts[1])) else { return [] }
        let id = String(parts[1])
        switch parts[2] {
        case "changed": return parts.count == 4 ? Int(parts[3]).map { [ChangeNotice(id: id, kind: .changed(lastSeq: $0))] } ?? [] : []
        case "deleted": return [ChangeNotice(id: id, kind: .deleted)]
        case "expired": return [ChangeNotice(id: id, kind: .expired)]
        default: return []
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
                        cache.removeAll()
                        handler(nil)
                    }
                    for payload in try connection?.notifications(waitingUpTo: 250) ?? [] {
                        for notice in parse(payload) {
                            cache.remove(notice.id)
                            handler(notice)
                        }
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
