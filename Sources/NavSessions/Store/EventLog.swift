import NavCore
import NavJSON
import NavSnapshot

/// A session's retained events packed into one byte buffer, for the memory store.
///
/// A `LifecycleEvent` value takes about a hundred bytes and its paths a heap string each;
/// packed, an `awake` takes about twenty. Events are read back only for `GET …/events`.
/// Layout of one event: kind (1 byte), flags (1 byte: screen, scene, from, to present),
/// seq and transition as LEB128, then each present string as LEB128 length + UTF-8; an event
/// with a detail (flag 16) ends with the detail's JSON, as a string.
package struct EventLog: Sendable {
    private(set) var bytes: [UInt8] = []
    /// Events in `bytes`.
    private(set) var count = 0

    private static let kinds = LifecycleEvent.Kind.allCases

    package init(_ events: [LifecycleEvent] = []) {
        append(events)
    }

    /// Measures the events, then writes them all into room made for them at once, through a
    /// pointer: one copy into `bytes` instead of an `Array.append` (a uniqueness and capacity
    /// check) per byte.
    package mutating func append(_ events: [LifecycleEvent]) {
        guard !events.isEmpty else { return }
        // Read in place, and written field by field: iterating the array, or passing an event on
        // while bytes are written, would copy each event (and retain all its strings).
        events.withUnsafeBufferPointer { events in
            guard let first = events.baseAddress else { return }
            var size = 0
            for index in events.indices { size += Self.size(of: events[index]) }
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
                guard let start = buffer.baseAddress else { return }
                var end = start
                for index in events.indices { end = Self.write(first + index, at: end) }
                bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
            }
        }
        count += events.count
    }

    /// The bytes `write(_:at:)` writes for `event`.
    private static func size(of event: borrowing LifecycleEvent) -> Int {
        2 + size(of: UInt64(max(0, event.seq))) + size(of: UInt64(max(0, event.transition))) + size(of: event.screen)
            + size(of: event.scene) + size(of: event.from) + size(of: event.to) + size(of: detailText(event.detail))
    }

    /// A detail as the text kept for it.
    @inline(__always)
    private static func detailText(_ detail: LifecycleEvent.Detail?) -> String? {
        detail.map(\.json.jsonString)
    }

    /// The bytes of a present string's length and UTF-8; 0 for an absent one.
    @inline(__always)
    private static func size(of text: String?) -> Int {
        guard let text else { return 0 }
        let length = text.utf8.count
        return size(of: UInt64(length)) + length
    }

    /// The bytes of `value` as LEB128: one per seven bits, at least one.
    @inline(__always)
    private static func size(of value: UInt64) -> Int {
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    /// Writes one event at `out`, which has room for `size(of: event)` bytes. - Returns: the end.
    @inline(__always)
    private static func write(_ event: UnsafePointer<LifecycleEvent>, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        out[0] = index(of: event.pointee.type)
        out[1] =
            (event.pointee.screen != nil ? 1 : 0) | (event.pointee.scene != nil ? 2 : 0) | (event.pointee.from != nil ? 4 : 0)
            | (event.pointee.to != nil ? 8 : 0) | (event.pointee.detail != nil ? 16 : 0)
        var end = write(UInt64(max(0, event.pointee.seq)), at: out + 2)
        end = write(UInt64(max(0, event.pointee.transition)), at: end)
        end = write(event.pointee.screen, at: end)
        end = write(event.pointee.scene, at: end)
        end = write(event.pointee.from, at: end)
        end = write(event.pointee.to, at: end)
        return write(detailText(event.pointee.detail), at: end)
    }

    /// A present string as its LEB128 length and UTF-8; nothing for an absent one.
    @inline(__always)
    private static func write(_ text: String?, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        guard let text else { return out }
        let length = text.utf8.count
        let start = write(UInt64(length), at: out)
        text.withUTF8Bytes { source in
            if let base = source.baseAddress { start.update(from: base, count: length) }
        }
        return start + length
    }

    @inline(__always)
    private static func write(_ value: UInt64, at out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var value = value
        var end = out
        while value >= 0x80 {
            end.pointee = UInt8(truncatingIfNeeded: value) | 0x80
            end += 1
            value >>= 7
        }
        end.pointee = UInt8(value)
        return end + 1
    }

    /// The kind's position in `Kind.allCases`, the byte that stands for it.
    private static func index(of kind: LifecycleEvent.Kind) -> UInt8 {
        switch kind {
        case .transitionStart: 0
        case .awake: 1
        case .willAppear: 2
        case .didAppear: 3
        case .willDisappear: 4
        case .didDisappear: 5
        case .remove: 6
        case .transitionEnd: 7
        case .paramsChanged: 8
        case .stateChanged: 9
        case .contextChanged: 10
        case .result: 11
        case .graphChanged: 12
        }
    }

    /// Keeps the newest `limit` events; trims in batches so appends stay cheap.
    /// - Returns: the bytes dropped (0 when it kept them all).
    @discardableResult
    package mutating func retain(_ limit: Int) -> Int {
        guard count > limit + limit / 4 else { return 0 }
        var reader = Reader(bytes: bytes)
        // Skipped, not decoded: decoding would build each dropped event's strings only to free them.
        for _ in 0..<(count - limit) where !reader.skip() { break }
        bytes.removeFirst(reader.offset)
        bytes.reserveCapacity(0)
        count = limit
        return reader.offset
    }

    /// Drops spare capacity (a buffer grown by appending may hold up to twice its bytes). Room
    /// that an allocator's size classes leave an exact buffer (up to a quarter of it and its
    /// 32-byte header, with jemalloc) is kept: a copy would get it again.
    package mutating func shrink() {
        guard bytes.capacity > bytes.count + (bytes.count + 32) / 4 else { return }
        bytes = bytes.withUnsafeBufferPointer { Array($0) }
    }

    /// Events with `seq > after`, oldest first, at most `limit`.
    package func events(after: Int, limit: Int) -> [LifecycleEvent] {
        var reader = Reader(bytes: bytes)
        var result: [LifecycleEvent] = []
        while result.count < limit, let event = reader.next() {
            if event.seq > after { result.append(event) }
        }
        return result
    }

    private struct Reader {
        package let bytes: [UInt8]
        package var offset = 0

        package mutating func next() -> LifecycleEvent? {
            guard let header = header(), header.kind < EventLog.kinds.count else { return nil }
            var texts: [String?] = []
            for bit in 0..<5 {
                guard header.flags & (1 << bit) != 0 else {
                    texts.append(nil)
                    continue
                }
                guard let range = text() else { return nil }
                texts.append(String(decoding: bytes[range], as: UTF8.self))
            }
            let detail = texts[4].flatMap { try? JSONValue(parsing: Array($0.utf8)) }.flatMap(LifecycleEvent.Detail.init(json:))
            return LifecycleEvent(
                seq: Int(header.seq), type: EventLog.kinds[header.kind], screen: texts[0], scene: texts[1],
                transition: Int(header.transition), from: texts[2], to: texts[3], detail: detail
            )
        }

        /// Moves past the next event without decoding it. - Returns: false at the end or at a
        /// malformed event (the offset then stays put).
        mutating func skip() -> Bool {
            let start = offset
            guard let header = header() else {
                offset = start
                return false
            }
            for bit in 0..<5 where header.flags & (1 << bit) != 0 {
                guard text() != nil else {
                    offset = start
                    return false
                }
            }
            return true
        }

        /// The next event's kind byte, text flags, seq and transition, leaving the offset at its
        /// first text.
        private mutating func header() -> (kind: Int, flags: UInt8, seq: UInt64, transition: UInt64)? {
            guard offset + 2 <= bytes.count else { return nil }
            let kind = Int(bytes[offset])
            let flags = bytes[offset + 1]
            offset += 2
            guard let seq = number(), let transition = number() else { return nil }
            return (kind, flags, seq, transition)
        }

        /// Where the next text's UTF-8 lies (after its length), moving past it; nil if the bytes
        /// end first.
        private mutating func text() -> Range<Int>? {
            guard let length = number(), length <= UInt64(bytes.count - offset) else { return nil }
            let range = offset..<offset + Int(length)
            offset = range.upperBound
            return range
        }

        private mutating func number() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }
    }
}
