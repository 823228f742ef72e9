import NavCore

/// A session's retained events packed into one byte buffer, for the memory store.
///
/// A `LifecycleEvent` value takes about a hundred bytes and its paths a heap string each;
/// packed, an `awake` takes about twenty. Events are read back only for `GET …/events`.
/// Layout of one event: kind (1 byte), flags (1 byte: screen, scene, from, to present),
/// seq and transition as LEB128, then each present string as LEB128 length + UTF-8.
struct EventLog: Sendable {
    private(set) var bytes: [UInt8] = []
    /// Events in `bytes`.
    private(set) var count = 0

    private static let kinds = LifecycleEvent.Kind.allCases

    init(_ events: [LifecycleEvent] = []) {
        append(events)
    }

    mutating func append(_ events: [LifecycleEvent]) {
        // Read in place: iterating the array would copy each event (and retain its strings).
        events.withUnsafeBufferPointer { events in
            for index in events.indices { append(events[index]) }
        }
    }

    @inline(__always)
    private mutating func append(_ event: LifecycleEvent) {
        bytes.append(Self.index(of: event.type))
        let flags: UInt8 =
            (event.screen != nil ? 1 : 0) | (event.scene != nil ? 2 : 0) | (event.from != nil ? 4 : 0)
            | (event.to != nil ? 8 : 0)
        bytes.append(flags)
        Self.appendNumber(UInt64(max(0, event.seq)), to: &bytes)
        Self.appendNumber(UInt64(max(0, event.transition)), to: &bytes)
        appendText(event.screen)
        appendText(event.scene)
        appendText(event.from)
        appendText(event.to)
        count += 1
    }

    /// A present string as its LEB128 length and UTF-8; nothing for an absent one.
    private mutating func appendText(_ text: String?) {
        guard let text else { return }
        Self.appendNumber(UInt64(text.utf8.count), to: &bytes)
        bytes.appendUTF8(text)
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
        }
    }

    /// Keeps the newest `limit` events; trims in batches so appends stay cheap.
    mutating func retain(_ limit: Int) {
        guard count > limit + limit / 4 else { return }
        var reader = Reader(bytes: bytes)
        for _ in 0..<(count - limit) { _ = reader.next() }
        bytes.removeFirst(reader.offset)
        bytes.reserveCapacity(0)
        count = limit
    }

    /// Drops spare capacity (a buffer grown by appending may hold up to twice its bytes).
    mutating func shrink() {
        guard bytes.capacity > bytes.count else { return }
        bytes = bytes.withUnsafeBufferPointer { Array($0) }
    }

    /// Events with `seq > after`, oldest first, at most `limit`.
    func events(after: Int, limit: Int) -> [LifecycleEvent] {
        var reader = Reader(bytes: bytes)
        var result: [LifecycleEvent] = []
        while result.count < limit, let event = reader.next() {
            if event.seq > after { result.append(event) }
        }
        return result
    }

    private static func appendNumber(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func next() -> LifecycleEvent? {
            guard offset + 2 <= bytes.count else { return nil }
            let kindIndex = Int(bytes[offset])
            let flags = bytes[offset + 1]
            offset += 2
            guard kindIndex < EventLog.kinds.count, let seq = number(), let transition = number() else { return nil }
            var texts: [String?] = []
            for bit in [UInt8(1), 2, 4, 8] {
                guard flags & bit != 0 else {
                    texts.append(nil)
                    continue
                }
                guard let length = number(), offset + Int(length) <= bytes.count else { return nil }
                texts.append(String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self))
                offset += Int(length)
            }
            return LifecycleEvent(
                seq: Int(seq), type: EventLog.kinds[kindIndex], screen: texts[0], scene: texts[1], transition: Int(transition),
                from: texts[2], to: texts[3]
            )
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
