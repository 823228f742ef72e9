import NavJSON
import NavSessions

#if canImport(Glibc)
    import Glibc
#endif

/// The SQLite store's write-ahead file of changes: what a change writes before it is answered.
///
/// Appending a change is one `pwrite(2)` of one record to the end of the current file (and an
/// `fdatasync` with `sync=full`), instead of an SQLite transaction that writes two WAL frames for
/// every page it touches. The database catches up in the background (see ``SQLiteStore``), one
/// *generation* at a time: a generation is one file, `PATH-changes-NNNNNN`, and ``rotate()`` starts
/// the next. A generation's file is removed once the database holds its changes.
///
/// A record is `[payload length: UInt32][checksum: UInt64][payload]`, little-endian; the checksum
/// covers the length and the payload. A change made with an `Idempotency-Key` carries its kept
/// answer after the events (a record without one ends there, as every record did before), so
/// the change and its answer are durable together; a change made with the feed on carries its
/// feed record last, introduced by ``feedTag`` (never an answer's status), so a record with
/// neither, or with an answer only, reads as it always did. Records are appended back to back, so bytes that are not a
/// record can only be a tail a crash cut short (never acknowledged) — unless a whole record
/// follows them: that is damage, and ``scan(prefix:)`` reports it with its offset instead of
/// stopping there (see ``SQLiteStore`` for what start-up does with it).
///
/// Not thread-safe: ``SQLiteStore`` uses it inside its lock.
package final class ChangeLog {
    /// One change: the session's new snapshot and the events of the transition that made it.
    package struct Record: Equatable {
        /// Increases across generations and restarts.
        package var seq: Int64
        var sessionID: String
        package var version: Int64
        var touchedAt: Int64
        /// The events' first and last `seq`, 0 and 0 for none.
        var firstEvent: Int64
        var lastEvent: Int64
        /// JSON bytes.
        package var snapshot: [UInt8]
        package var events: [UInt8]
        /// The answer to the request that made the change, kept under its `Idempotency-Key`.
        package var answer: KeptAnswer? = nil
        /// The change's feed record and its place in the feed (``SQLiteStore`` says how it is numbered).
        package var feed: LoggedFeedRecord? = nil
    }

    /// What introduces a record's feed section: an answer section starts with its HTTP status,
    /// which is never negative.
    static let feedTag: Int64 = -1

    package let prefix: String
    private let synchronous: Bool
    private let files: any ChangeLogFiles
    private(set) var generation: Int
    private var descriptor: Int32 = -1
    /// The current generation's bytes: its records, back to back.
    private(set) var size = 0
    private var buffer: [UInt8] = []

    /// Opens a new, empty generation after the existing ones (see ``read(prefix:)``).
    /// - Parameters:
    ///   - prefix: the path the generation numbers are appended to.
    ///   - synchronous: `fdatasync` every record (survives power loss, not only `kill -9`).
    ///   - files: the system calls records are written with (tests inject failures).
    package init(prefix: String, after generation: Int, synchronous: Bool, files: any ChangeLogFiles = SystemFiles()) throws(StoreError) {
        self.prefix = prefix
        self.synchronous = synchronous
        self.files = files
        self.generation = generation
        try rotate()
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    package func path(of generation: Int) -> String {
        let digits = String(generation)
        return prefix + "-changes-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// Appends one record; when this returns, a `kill -9` cannot lose it.
    package func append(_ record: Record) throws(StoreError) {
        buffer.removeAll(keepingCapacity: true)
        Self.encode(record, into: &buffer)
        let written = buffer.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = files.pwrite(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, off_t(size + offset))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, !synchronous || files.fdatasync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            // Whatever part was written is overwritten by the next record, or cut off here.
            _ = ftruncate(descriptor, off_t(size))
            // Disk full, an I/O error: nothing was acknowledged, and once there is room again the
            // next record goes where this one would have.
            throw StoreError(message: "cannot write to \(path(of: generation)): \(reason)", kind: .unavailable)
        }
        size += buffer.count
    }

    /// Checks that the current file can take `count` more bytes now (written, and synced with
    /// `synchronous`), leaving it as it was: how the store learns that a full disk has room again.
    package func probe(_ count: Int) throws(StoreError) {
        let zeros = [UInt8](repeating: 0, count: count)
        let written = zeros.withUnsafeBytes { files.pwrite(descriptor, $0.baseAddress, $0.count, off_t(size)) }
        let reason = String(cString: strerror(errno))
        let synced = written == count && (!synchronous || files.fdatasync(descriptor) == 0)
        _ = ftruncate(descriptor, off_t(size))
        guard synced else {
            throw StoreError(
                message: "cannot write to \(path(of: generation)): \(written < 0 ? reason : "short write")", kind: .unavailable)
        }
    }

    /// Closes the current generation and starts the next, empty one.
    /// - Returns: the generation just closed.
    @discardableResult
    func rotate() throws(StoreError) -> Int {
        let next = generation + 1
        let path = path(of: next)
        let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw StoreError(message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = opened
        size = 0
        let closed = generation
        generation = next
        return closed
    }

    /// Closes the current generation and removes every file: the database holds all their changes.
    /// Later appends fail.
    func discard() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        for (_, path) in Self.files(prefix: prefix) { unlink(path) }
    }

    /// Removes the files of every generation up to `last`, the current one excepted.
    package func remove(through last: Int) {
        for (generation, path) in Self.files(prefix: prefix) where generation <= last && generation != self.generation {
            unlink(path)
        }
    }

    /// The records of every generation on disk, oldest first, and the newest generation number;
    /// bytes that are not records are skipped (``scan(prefix:)`` says where they are).
    package static func read(prefix: String) throws(StoreError) -> (records: [Record], lastGeneration: Int) {
        let scans = try scan(prefix: prefix)
        return (scans.flatMap(\.records), scans.last?.generation ?? 0)
    }

    /// What reading one generation's file found.
    package struct FileScan {
        var generation: Int
        package var path: String
        package var size: Int
        package var records: [Record] = []
        /// Where each record starts.
        var offsets: [Int] = []
        package var problems: [Problem] = []
    }

    /// Bytes of a file that are not records.
    package struct Problem: Equatable {
        package var offset: Int
        package var length: Int
        /// Records follow it in the same file: damage, not the tail a crash cut short.
        var followedByRecords: Bool
    }

    /// Every generation's file, oldest first: its records and the bytes that are not records.
    package static func scan(prefix: String) throws(StoreError) -> [FileScan] {
        var scans: [FileScan] = []
        for (generation, path) in files(prefix: prefix) {
            scans.append(scan(try contents(of: path), generation: generation, path: path))
        }
        return scans
    }

    package static func scan(_ bytes: [UInt8], generation: Int, path: String) -> FileScan {
        var result = FileScan(generation: generation, path: path, size: bytes.count)
        var offset = 0
        var lastSeq: Int64?
        while offset < bytes.count {
            if let (record, next) = decode(bytes, at: offset) {
                result.records.append(record)
                result.offsets.append(offset)
                lastSeq = record.seq
                offset = next
                continue
            }
            let resume = nextRecord(in: bytes, after: offset, seqAbove: lastSeq)
            result.problems.append(Problem(offset: offset, length: (resume ?? bytes.count) - offset, followedByRecords: resume != nil))
            guard let resume else { break }
            offset = resume
        }
        return result
    }

    /// Smallest record: the header, five integers and three field lengths.
    private static let minimumRecord = 12 + 5 * 8 + 3 * 4

    /// Where the first whole record after the unreadable bytes at `offset` starts, if one does.
    /// Candidates are filtered by a plausible length and seq before their checksum is computed, so
    /// a search through a large file stays about linear.
    private static func nextRecord(in bytes: [UInt8], after offset: Int, seqAbove lastSeq: Int64?) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            var candidate = offset + 1
            while candidate + minimumRecord <= raw.count {
                defer { candidate += 1 }
                let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: candidate, as: UInt32.self)))
                guard length >= minimumRecord - 12, candidate + 12 + length <= raw.count else { continue }
                let seq = Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: candidate + 12, as: UInt64.self)))
                if let lastSeq {
                    // Seqs are consecutive: at most one record lost per smallest record's bytes.
                    guard seq > lastSeq, seq - lastSeq <= Int64((candidate - offset) / minimumRecord + 1) else { continue }
                } else {
                    guard seq > 0, seq < 1 << 48 else { continue }
                }
                if decode(bytes, at: candidate) != nil { return candidate }
            }
            return nil
        }
    }

    /// `(generation, path)` of the files under `prefix`, by generation.
    package static func files(prefix: String) -> [(Int, String)] {
        let slash = prefix.lastIndex(of: "/")
        let folder = slash.map { String(prefix[..<$0]) } ?? "."
        let stem = (slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix) + "-changes-"
        guard let directory = opendir(folder.isEmpty ? "/" : folder) else { return [] }
        defer { closedir(directory) }
        var found: [(Int, String)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(stem), let generation = Int(name.dropFirst(stem.count)), generation > 0 else { continue }
            found.append((generation, folder + "/" + name))
        }
        return found.sorted { $0.0 < $1.0 }
    }

    private static func contents(of path: String) throws(StoreError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw StoreError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    // MARK: Record bytes

    /// Largest payload accepted when reading: more than any record navd writes (snapshots and
    /// events are bounded by the request limits), so a length read from garbage ends the file.
    static let maximumPayload = 64 << 20

    /// Writes each field in place: no array is made for a field or a list of them, since this runs
    /// under the store's append lock.
    static func encode(_ record: Record, into bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 12))
        append(record.seq, to: &bytes)
        append(record.version, to: &bytes)
        append(record.touchedAt, to: &bytes)
        append(record.firstEvent, to: &bytes)
        append(record.lastEvent, to: &bytes)
        append(record.sessionID, to: &bytes)
        append(record.snapshot, to: &bytes)
        append(record.events, to: &bytes)
        if let answer = record.answer {
            append(Int64(answer.status), to: &bytes)
            append(answer.createdAt, to: &bytes)
            append(answer.key, to: &bytes)
            append(answer.fingerprint, to: &bytes)
            append(answer.headersJSON, to: &bytes)
            append(answer.body, to: &bytes)
        }
        if let feed = record.feed {
            // The session is the change's: its id is not written twice.
            append(feedTag, to: &bytes)
            append(feed.position, to: &bytes)
            append(Int64(feed.record.version), to: &bytes)
            append(Int64(feed.record.isEnd ? 1 : 0), to: &bytes)
            append(feed.record.time, to: &bytes)
            append(feed.record.graph, to: &bytes)
            append(feed.record.attributesJSON, to: &bytes)
            append(feed.record.full, to: &bytes)
            append(feed.record.analyticsIfDifferent, to: &bytes)
            // The view's scenes (none: not a view; a scene name is never empty).
            append(feed.record.toScene ?? "", to: &bytes)
            append(feed.record.fromScene ?? "", to: &bytes)
        }
        let length = UInt32(bytes.count - start - 12)
        let sum = bytes.withUnsafeBytes { checksum(length: length, UnsafeRawBufferPointer(rebasing: $0[(start + 12)...])) }
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: length.littleEndian, toByteOffset: start, as: UInt32.self)
            raw.storeBytes(of: sum.littleEndian, toByteOffset: start + 4, as: UInt64.self)
        }
    }

    /// The record at `offset` and the offset after it, or nil for the end, a short record or a
    /// checksum that does not match.
    package static func decode(_ bytes: [UInt8], at offset: Int) -> (Record, Int)? {
        bytes.withUnsafeBytes { raw -> (Record, Int)? in
            guard offset + 12 <= raw.count else { return nil }
            let length = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let sum = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt64.self))
            let start = offset + 12
            guard Int(length) <= maximumPayload, start + Int(length) <= raw.count else { return nil }
            let payload = UnsafeRawBufferPointer(rebasing: raw[start..<start + Int(length)])
            guard checksum(length: length, payload) == sum else { return nil }
            var reader = Reader(bytes: payload)
            guard let seq = reader.int(), let version = reader.int(), let touchedAt = reader.int(),
                let firstEvent = reader.int(), let lastEvent = reader.int(),
                let id = reader.field(), let snapshot = reader.field(), let events = reader.field()
            else { return nil }
            var record = Record(
                seq: seq, sessionID: String(decoding: id, as: UTF8.self), version: version, touchedAt: touchedAt,
                firstEvent: firstEvent, lastEvent: lastEvent, snapshot: snapshot, events: events
            )
            if !reader.atEnd, reader.peekInt() != feedTag {
                guard let status = reader.int(), let createdAt = reader.int(), let key = reader.field(), let fingerprint = reader.field(),
                    let headers = reader.field(), let body = reader.field()
                else { return nil }
                record.answer = KeptAnswer(
                    key: String(decoding: key, as: UTF8.self), session: record.sessionID, fingerprint: fingerprint, status: Int(status),
                    headers: KeptAnswer.headers(fromJSON: headers), body: body, createdAt: createdAt)
            }
            if !reader.atEnd {
                guard reader.int() == feedTag, let position = reader.int(), let version = reader.int(), let isEnd = reader.int(),
                    let time = reader.int(), let graph = reader.field(), let attributes = reader.field(), let full = reader.field(),
                    let analytics = reader.field()
                else { return nil }
                // Attributes that do not read back as an object leave the record without them,
                // as a purge by attribute would then find it: by none.
                let values = (try? JSONValue(parsing: attributes))?.objectValue ?? [:]
                // A record of an older navd ends here: its view is read from its screens.
                var view: (from: String?, to: String)?
                if reader.atEnd {
                    view = FeedRecord.view(fromFull: full)
                } else {
                    guard let to = reader.field(), let from = reader.field() else { return nil }
                    view =
                        to.isEmpty ? nil : (from.isEmpty ? nil : String(decoding: from, as: UTF8.self), String(decoding: to, as: UTF8.self))
                }
                record.feed = LoggedFeedRecord(
                    position: position,
                    record: FeedRecord(
                        session: record.sessionID, version: Int(version), isEnd: isEnd != 0, graph: String(decoding: graph, as: UTF8.self),
                        time: time, attributes: values, full: full, analytics: analytics.isEmpty ? full : analytics, fromScene: view?.from,
                        toScene: view?.to))
            }
            guard reader.atEnd else { return nil }
            return (record, start + Int(length))
        }
    }

    private struct Reader {
        package let bytes: UnsafeRawBufferPointer
        package var offset = 0

        package mutating func int() -> Int64? {
            guard offset + 8 <= bytes.count else { return nil }
            defer { offset += 8 }
            return Int64(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }

        func peekInt() -> Int64? {
            guard offset + 8 <= bytes.count else { return nil }
            return Int64(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        }

        package mutating func field() -> [UInt8]? {
            guard offset + 4 <= bytes.count else { return nil }
            let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard offset + 4 + count <= bytes.count else { return nil }
            defer { offset += 4 + count }
            return Array(bytes[offset + 4..<offset + 4 + count])
        }

        var atEnd: Bool { offset == bytes.count }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ value: Int64, to bytes: inout [UInt8]) {
        append(UInt64(bitPattern: value), to: &bytes)
    }

    /// A field: its length, then its bytes.
    private static func append(_ field: [UInt8], to bytes: inout [UInt8]) {
        append(UInt32(field.count), to: &bytes)
        bytes.append(contentsOf: field)
    }

    /// A text field: its UTF-8 length, then its UTF-8 bytes.
    private static func append(_ field: String, to bytes: inout [UInt8]) {
        append(UInt32(field.utf8.count), to: &bytes)
        bytes.append(contentsOf: field.utf8)
    }

    /// A 64-bit hash of the length and the payload, eight bytes at a time (multiply, xor-shift):
    /// it catches a record cut short or overwritten; it is no defence against tampering.
    static func checksum(length: UInt32, _ payload: UnsafeRawBufferPointer) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = UInt64(length) &* multiplier ^ 0x6E61_7664_6C6F_6721
        var offset = 0
        while offset + 8 <= payload.count {
            hash = (hash ^ UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt64.self))) &* multiplier
            hash ^= hash >> 29
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < payload.count {
            tail |= UInt64(payload[offset]) << shift
            shift += 8
            offset += 1
        }
        hash = (hash ^ tail ^ (UInt64(payload.count & 7) << 56)) &* multiplier
        return hash ^ (hash >> 32)
    }
}

/// The system calls the change log writes records with: the real ones (``SystemFiles``), or in
/// tests ones that fail on demand as a full disk or a failing one would.
package protocol ChangeLogFiles: Sendable {
    /// `pwrite(2)`: bytes written, or -1 with `errno` set.
    func pwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int
    /// `fdatasync(2)`: 0, or -1 with `errno` set.
    func fdatasync(_ descriptor: Int32) -> Int32
}

package struct SystemFiles: ChangeLogFiles {
    package func pwrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int {
        Glibc.pwrite(descriptor, bytes, count, offset)
    }

    package func fdatasync(_ descriptor: Int32) -> Int32 {
        Glibc.fdatasync(descriptor)
    }
}
