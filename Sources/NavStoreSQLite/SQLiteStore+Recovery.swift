import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// Start-up after a crash (the change log folded in, damage refused or, accepted, set aside) and
/// `navd store check`.
extension SQLiteStore {
    /// The first problems `PRAGMA quick_check` or `integrity_check` reports (none: the file is sound).
    static func integrity(_ connection: SQLiteConnection, check: String, limit: Int) throws(StoreError) -> [String] {
        let statement = try connection.statement("PRAGMA \(check)(\(limit))")
        defer { statement.reset() }
        var problems: [String] = []
        while try statement.step() {
            let line = statement.text(0)
            if line != "ok" { problems.append(line) }
        }
        return problems
    }

    /// What start-up folded in from the change log, and where the log goes on.
    package struct ChangeLogRecovery {
        /// The seq of the last change kept: the next change is one after it.
        var lastSeq: Int64
        /// The last generation found on disk; the log starts the one after it.
        var lastGeneration: Int
        /// What was left out and set aside (with `acceptingLoss`), one line each.
        var report: [String]
    }

    /// Folds what the change log holds past `store_meta.compacted_seq` (a crash's leftovers) into
    /// the database, before anything is served; with `acceptingLoss`, sets damaged files aside.
    /// - Parameters:
    ///   - path: the database, as named in messages.
    ///   - prefix: where its change log is (``placeChangeLog(_:path:identity:adopting:)``).
    static func recoverChangeLog(
        _ connection: SQLiteConnection, path: String, prefix: String, retainedEvents: Int, acceptingLoss: Bool
    ) throws(StoreError) -> ChangeLogRecovery {
        let compacted = try compactedSeq(connection)
        let scans = try ChangeLog.scan(prefix: prefix)
        let lastGeneration = scans.last?.generation ?? 0
        let recovery = try recover(scans, after: compacted, connection, path: path, acceptingLoss: acceptingLoss)
        var recovered: [String: Fold] = [:]
        for record in recovery.records {
            fold(record, into: &recovered, retainedEvents: retainedEvents)
        }
        // A crash may have come between two chunks of a fold: some of these are in the tables already.
        // The feed records of the changes kept (a change dropped by a repair takes its record along).
        try write(
            recovered, through: recovery.lastSeq, connection, retainedEvents: retainedEvents, repeating: true,
            feed: recovery.records.compactMap(\.feed))
        // A repair's dropped changes may have had records a reader was handed: numbering goes on above them.
        if acceptingLoss, let newest = scans.lazy.flatMap(\.records).compactMap(\.feed?.position).max() {
            try recordRemoved(through: newest, floor: false, connection)
        }
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        // Only now that the database holds what was kept: a crash before this repeats the repair.
        for file in recovery.damagedFiles {
            guard rename(file, file + ".damaged") == 0 else {
                throw StoreError(message: "cannot rename \(file) to \(file).damaged: \(String(cString: strerror(errno)))")
            }
        }
        return ChangeLogRecovery(lastSeq: recovery.lastSeq, lastGeneration: lastGeneration, report: recovery.report)
    }

    /// Changes missing from the change log: seqs are consecutive, so every seq after the last one
    /// compacted must be in the files; a crash can only cut the last record short.
    package struct Damage {
        /// The file and the byte where the unreadable bytes start (the record after the gap when
        /// no bytes are unreadable, e.g. a file was removed).
        package var file: String
        package var offset: Int
        var unreadableBytes: Int
        /// The seqs of the changes that are missing.
        package var lost: ClosedRange<Int64>

        package var description: String {
            let changes =
                lost.count == 1
                ? "change seq \(lost.lowerBound) is" : "\(lost.count) changes (seqs \(lost.lowerBound)…\(lost.upperBound)) are"
            let bytes =
                unreadableBytes > 0
                ? "\(unreadableBytes) bytes are not records, yet whole records follow them" : "changes are missing before this record"
            return "\(file) at byte offset \(offset): \(bytes); \(changes) missing"
        }
    }

    /// Every place where changes after `compacted` are missing from the files.
    static func damage(in scans: [ChangeLog.FileScan], after compacted: Int64) -> [Damage] {
        var found: [Damage] = []
        var expected = compacted + 1
        var previous: (scan: Int, offset: Int)?
        for (scanIndex, scan) in scans.enumerated() {
            for (index, record) in scan.records.enumerated() {
                defer { previous = (scanIndex, scan.offsets[index]) }
                guard record.seq > compacted else { continue }
                defer { expected = max(expected, record.seq + 1) }
                guard record.seq != expected else { continue }
                let offset = scan.offsets[index]
                // The unreadable bytes just before this record: in this file after the previous
                // record, or at the end of the previous file.
                let before = previous.map { $0.scan == scanIndex ? $0.offset : -1 } ?? -1
                var place = (file: scan.path, offset: offset, bytes: 0)
                if let problem = scan.problems.last(where: { $0.offset < offset && $0.offset > before }) {
                    place = (scan.path, problem.offset, problem.length)
                } else if scanIndex > 0, let problem = scans[scanIndex - 1].problems.last, before < 0 || previous?.scan != scanIndex {
                    place = (scans[scanIndex - 1].path, problem.offset, problem.length)
                }
                let lost = record.seq > expected ? expected...(record.seq - 1) : record.seq...record.seq
                found.append(Damage(file: place.file, offset: place.offset, unreadableBytes: place.bytes, lost: lost))
            }
        }
        return found
    }

    private struct Recovery {
        package var records: [ChangeLog.Record] = []
        var lastSeq: Int64
        var damagedFiles: [String] = []
        var report: [String] = []
    }

    /// The logged changes start-up folds in: all of them after `compacted`, unless some are
    /// missing. Then it refuses, or with `acceptingLoss` keeps each session's changes up to its
    /// first missing version (its later ones would leave a gap in its versions and events).
    private static func recover(
        _ scans: [ChangeLog.FileScan], after compacted: Int64, _ connection: SQLiteConnection, path: String, acceptingLoss: Bool
    ) throws(StoreError) -> Recovery {
        let records = scans.flatMap(\.records).filter { $0.seq > compacted }
        var recovery = Recovery(lastSeq: max(compacted, records.map(\.seq).max() ?? compacted))
        let damage = damage(in: scans, after: compacted)
        guard let first = damage.first else {
            recovery.records = records
            return recovery
        }
        guard acceptingLoss else {
            let more = damage.count > 1 ? " (and \(damage.count - 1) more places)" : ""
            throw StoreError(
                message: "the change log is damaged: \(first.description)\(more). A crash only cuts the last record short, so "
                    + "acknowledged changes would be lost: refusing to start, and the files are kept. Inspect them with "
                    + "`navd store check --store sqlite:\(path)`; to fold what is valid and set the damaged file aside, losing "
                    + "those changes, run `navd store repair --store sqlite:\(path) --accept-loss`"
            )
        }
        var versions: [String: Int64] = [:]
        var deleted: Set<String> = []
        var dropped: [String: (kept: Int64, versions: [Int64])] = [:]
        let stored = try connection.statement("SELECT version FROM sessions WHERE id = ?")
        for record in records {
            let id = record.sessionID
            if dropped[id] != nil {
                dropped[id]?.versions.append(record.version)
                continue
            }
            if deleted.contains(id) { continue }
            if versions[id] == nil {
                try stored.bind(1, id)
                let found = try stored.step()
                let version = stored.int(0)
                stored.reset()
                // A session deleted since: its changes were never going to be folded.
                guard found else {
                    deleted.insert(id)
                    continue
                }
                versions[id] = version
            }
            let current = versions[id] ?? 0
            if record.version == current + 1 {
                recovery.records.append(record)
                versions[id] = record.version
            } else {
                dropped[id] = (current, [record.version])
            }
        }
        for place in damage {
            recovery.report.append("lost: \(place.description)")
            if !recovery.damagedFiles.contains(place.file), place.unreadableBytes > 0 { recovery.damagedFiles.append(place.file) }
        }
        for (id, loss) in dropped.sorted(by: { $0.key < $1.key }) {
            let versions =
                loss.versions.count == 1 ? "version \(loss.versions[0])" : "versions \(loss.versions.first ?? 0)…\(loss.versions.last ?? 0)"
            let count = loss.versions.count == 1 ? "1 change" : "\(loss.versions.count) changes"
            recovery.report.append("session \(id): kept at version \(loss.kept); its \(versions) (\(count) after the missing ones) dropped")
        }
        recovery.report.append(
            "sessions whose missing changes were their last ones keep their version before them; they cannot be named, since their ids were in the damaged bytes"
        )
        for file in recovery.damagedFiles { recovery.report.append("set aside: \(file) → \(file).damaged") }
        return recovery
    }

    /// What `navd store check` prints: the database's `PRAGMA integrity_check`, every change log
    /// file with its records and the bytes that are not records, and every place changes are
    /// missing, and whether navd opens the schema. Changes nothing; refuses while another process
    /// (a running navd) holds the database, by whatever name (an `inUse` error).
    /// - Returns: the report's lines, and whether anything is damaged (or the schema refused).
    package static func inspect(path: String) throws(StoreError) -> (lines: [String], damaged: Bool) {
        // Before anything else: a database in use is not read at all (SQLite would answer
        // "database is locked", which is not damage). Taking the lock creates a missing file, so
        // whether there is a database is asked first.
        // Before anything else: a database in use is not read at all (SQLite would answer
        // "database is locked", which is not damage). Without a file there is nothing to hold.
        let exists = access(path, F_OK) == 0
        let ownership = exists ? try DatabaseLock(path: path) : nil
        defer { ownership?.release() }
        var lines: [String] = []
        var damaged = false
        var compacted: Int64 = 0
        var schemaRefused = false
        var prefix = (try? FileSystem.realPath(path)) ?? path
        if exists {
            let connection: SQLiteConnection
            do {
                connection = try SQLiteConnection(path: ownership.map { databasePath(for: path, identity: $0.identity) } ?? path)
            } catch let error where error.kind == .inUse {
                throw DatabaseLock.inUse(
                    path, holder: ownership.flatMap { DatabaseLock.holder(of: $0.descriptor, $0.identity, holdingFlock: true) })
            }
            defer { connection.close() }
            do {
                let problems = try integrity(connection, check: "integrity_check", limit: 100)
                if problems.isEmpty {
                    lines.append("\(path): ok (PRAGMA integrity_check)")
                } else {
                    damaged = true
                    lines.append("\(path): DAMAGED (PRAGMA integrity_check):")
                    lines += problems.map { "  \($0)" }
                }
                let schema = try schemaReport(connection)
                lines.append("  \(schema.line)")
                schemaRefused = schema.refused
                if schema.refused { damaged = true }
                compacted = (try? compactedSeq(connection)) ?? 0
                lines.append("  changes folded into it: through seq \(compacted)")
            } catch let error where error.kind == .inUse {
                throw DatabaseLock.inUse(
                    path, holder: ownership.flatMap { DatabaseLock.holder(of: $0.descriptor, $0.identity, holdingFlock: true) })
            } catch {
                damaged = true
                lines.append("\(path): DAMAGED: \(error.message)")
            }
            // Where start-up would look for the change log, without recording it.
            if !schemaRefused, let identity = ownership?.identity {
                do throws(StoreError) {
                    let place = try placeChangeLog(connection, path: path, identity: identity, adopting: false)
                    prefix = place.prefix
                    lines.append("  change log: \(prefix)-changes-*" + (place.record == nil ? "" : " (recorded when navd next starts)"))
                } catch {
                    damaged = true
                    lines.append("CHANGE LOG: \(error.message)")
                }
            }
        } else {
            lines.append("\(path): no database yet")
        }
        let scans = try ChangeLog.scan(prefix: prefix)
        for scan in scans {
            let seqs = scan.records.first.map { "seqs \($0.seq)…\(scan.records.last?.seq ?? $0.seq)" } ?? "no records"
            lines.append("\(scan.path): \(scan.size) bytes, \(scan.records.count) records (\(seqs))")
            for problem in scan.problems {
                lines.append(
                    problem.followedByRecords
                        ? "  byte offset \(problem.offset): \(problem.length) bytes are not records, and records follow"
                        : "  byte offset \(problem.offset): the last \(problem.length) bytes are a record cut short (a crash's unacknowledged tail, dropped at start)"
                )
            }
        }
        var logDamaged = false
        for place in damage(in: scans, after: compacted) {
            damaged = true
            logDamaged = true
            lines.append("DAMAGE: \(place.description)")
        }
        // Repair folds the change log; it cannot make an unknown schema one navd opens.
        if damaged, !scans.isEmpty, logDamaged || !schemaRefused {
            lines.append(
                "navd refuses to start on this store. To fold what is valid and set the damaged files aside: navd store repair --store sqlite:\(path) --accept-loss"
            )
        }
        return (lines, damaged)
    }

    private static func compactedSeq(_ connection: SQLiteConnection) throws(StoreError) -> Int64 {
        let statement = try connection.statement("SELECT value FROM store_meta WHERE key = 'compacted_seq'")
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int(0)
    }
}
