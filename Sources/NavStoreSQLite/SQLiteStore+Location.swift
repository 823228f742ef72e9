import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// Where the change log lives: recorded in the database itself, so that every name the file is
/// opened by (a symlink, a hard link, a `..` path) finds the same log (docs/design.md, "A store
/// is named by what it is"). A hard link has no canonical path, so the name the store was opened
/// by cannot say it.
///
/// `store_meta` holds `log_prefix` (the absolute path the log's generation numbers are appended
/// to: `PREFIX-changes-NNNNNN`; always starting with `/`, so the column's integer affinity keeps
/// it as text) and `log_device` and `log_inode`: the identity of the file that recorded it. A file
/// with another identity (a copy, a backup restored) did not record it: its log is found and
/// recorded anew, as for a file written before the location was recorded.
extension SQLiteStore {
    /// The change log's location as the database records it.
    struct LogLocation {
        var prefix: String
        var identity: FileIdentity
    }

    /// Where the database's change log is, and what start-up wrote or noted about it.
    struct ChangeLogPlace {
        var prefix: String
        /// The location to record (none: the recorded one stands).
        var record: LogLocation?
        /// For a repair's report: a recorded location given up for this one.
        var note: String?
    }

    /// The recorded location, or nil when the file has none (new, or written before it was recorded).
    static func recordedLogLocation(_ connection: SQLiteConnection) throws(StoreError) -> LogLocation? {
        // A new database has no tables yet.
        let tables = try connection.statement("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'store_meta'")
        _ = try tables.step()
        let hasMeta = tables.int(0) > 0
        tables.reset()
        guard hasMeta else { return nil }
        let statement = try connection.statement(
            "SELECT key, value FROM store_meta WHERE key IN ('log_prefix', 'log_device', 'log_inode')"
        )
        defer { statement.reset() }
        var prefix: String?
        var device: Int64?
        var inode: Int64?
        while try statement.step() {
            switch statement.text(0) {
            case "log_prefix": prefix = statement.text(1)
            case "log_device": device = statement.int(1)
            default: inode = statement.int(1)
            }
        }
        guard let prefix, let device, let inode else { return nil }
        return LogLocation(prefix: prefix, identity: FileIdentity(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode)))
    }

    /// The name every connection opens the database at `path` (the file `identity` names) by:
    /// the one it recorded, while that name still is this file, else `path`.
    ///
    /// SQLite keeps its write-ahead log beside the name it opens (`NAME-wal`): through a hard link
    /// it would miss what a crash left in the other name's, and a later start by that name would
    /// lay those old pages over newer ones. The record is read from the file alone (the WAL's
    /// name is what is being looked for), where start-up checkpoints it as soon as it writes it.
    static func databasePath(for path: String, identity: FileIdentity) -> String {
        guard let real = try? FileSystem.realPath(path),
            let probe = try? SQLiteConnection(readingFileOnly: real)
        else { return path }
        defer { probe.close() }
        guard let recorded = try? recordedLogLocation(probe), recorded.identity == identity,
            FileSystem.identity(of: recorded.prefix) == identity
        else { return path }
        return recorded.prefix
    }

    /// Records `location` (one transaction).
    static func record(_ location: LogLocation, _ connection: SQLiteConnection) throws(StoreError) {
        try connection.transaction { () throws(StoreError) in
            let upsert = "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            try connection.statement(upsert).bind(1, "log_prefix").bind(2, location.prefix).run()
            try connection.statement(upsert).bind(1, "log_device").bind(2, Int64(bitPattern: location.identity.device)).run()
            try connection.statement(upsert).bind(1, "log_inode").bind(2, Int64(bitPattern: location.identity.inode)).run()
        }
    }

    /// Where the change log of the database at `path` (the file `identity` names) is.
    ///
    /// The location the file recorded itself, if its folder can be reached and no log files lie
    /// under another of the file's names; otherwise (an older file, a copy) the one name under
    /// which log files are found, or the file's real path when there are none, to be recorded.
    /// - Parameter adopting: a recorded folder that cannot be reached is given up for the file's
    ///   real path (`navd store repair --accept-loss`), with a note, instead of refused.
    /// - Throws: when the recorded folder cannot be reached, or log files lie where they would be
    ///   ignored: acknowledged changes are never dropped silently.
    static func placeChangeLog(
        _ connection: SQLiteConnection, path: String, identity: FileIdentity, adopting: Bool
    ) throws(StoreError) -> ChangeLogPlace {
        let real = try FileSystem.realPath(path)
        let given = try FileSystem.resolvingFolder(of: path)
        let names = real == given ? [real] : [real, given]
        /// The side files under `prefix`: change log generations, and an SQLite write-ahead log
        /// that holds pages (one written through that name by a navd that did not record it).
        func logFiles(_ prefix: String) -> [String] {
            var status = stat()
            let wal = stat(prefix + "-wal", &status) == 0 && status.st_size > 0 ? [prefix + "-wal"] : []
            return ChangeLog.files(prefix: prefix).map(\.1) + wal
        }
        func list(_ files: [String]) -> String {
            files.count <= 4 ? files.joined(separator: ", ") : files.prefix(4).joined(separator: ", ") + " and \(files.count - 4) more"
        }
        let recorded = try recordedLogLocation(connection)
        var note: String?
        if let recorded, recorded.identity == identity {
            let folder = FileSystem.folder(of: recorded.prefix)
            var status = stat()
            let reachable = stat(folder, &status) == 0
            let reason = reachable ? "not a folder" : FileSystem.reason(errno)
            if reachable, status.st_mode & S_IFMT == S_IFDIR {
                let elsewhere = names.filter { $0 != recorded.prefix }.flatMap(logFiles)
                guard elsewhere.isEmpty else {
                    throw StoreError(
                        message: "the database \(path) records its change log at \(recorded.prefix)-changes-*, but change log files "
                            + "are also at \(list(elsewhere)) (written through another name of the file, by a navd that did not record "
                            + "where its log is?). Their acknowledged changes would be ignored: refusing to start, and every file is "
                            + "kept. See them with `navd store check --store sqlite:\(path)`, and fold them in by hand"
                    )
                }
                return ChangeLogPlace(prefix: recorded.prefix, record: nil, note: nil)
            }
            guard adopting else {
                throw StoreError(
                    message: "the database \(path) records its change log at \(recorded.prefix)-changes-*, but \(folder) cannot be "
                        + "reached: \(reason). Acknowledged changes may be there: refusing to start rather than ignore them. Bring "
                        + "that folder back (mount it, move the files back); if it is gone for good, "
                        + "`navd store repair --store sqlite:\(path) --accept-loss` records the log next to the file instead"
                )
            }
            note =
                "the change log recorded at \(recorded.prefix)-changes-* cannot be reached (\(folder): \(reason)); whatever it held is lost"
        } else if let recorded, !names.contains(recorded.prefix), FileSystem.identity(of: recorded.prefix) != recorded.identity {
            // Recorded by another file (this one is a copy, or a backup restored) that is no longer
            // there: files left under its name may be what this copy lacks. (While that file is
            // there, they are its own.)
            let left = logFiles(recorded.prefix)
            guard left.isEmpty else {
                throw StoreError(
                    message: "the database \(path) was recorded by another file (this one is a copy of it?), whose change log "
                        + "\(list(left)) still holds changes: which file they belong to cannot be told, so start-up refuses rather "
                        + "than ignore them. Start the original, or move those files aside once you know what they hold"
                )
            }
        }
        let found = names.filter { !logFiles($0).isEmpty }
        guard found.count <= 1 else {
            throw StoreError(
                message: "the database \(path) has change log files under two of its names: \(list(found.flatMap(logFiles))). Which "
                    + "holds what cannot be told, so start-up refuses rather than ignore either; every file is kept"
            )
        }
        let prefix = found.first ?? real
        if let before = note { note = before + "; the log is now recorded at \(prefix)-changes-*" }
        return ChangeLogPlace(prefix: prefix, record: LogLocation(prefix: prefix, identity: identity), note: note)
    }
}
