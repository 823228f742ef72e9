import NavCore
import NavJSON

// The event log a store keeps, written; `Snapshot.swift` reads it back. The API answers the same
// bytes (a change's events are written once, for the store and the answer), so the wire shape of
// an event is this stored shape by decision: NavWire writes events through these writers, never
// its own (EventShapeTests holds openapi.yaml's `Event` to this shape).

extension JSONWriter {
    /// `[event, …]`.
    package mutating func writeEvents(_ events: [LifecycleEvent]) {
        // Read in place: iterating the array would copy each event (and retain its strings).
        events.withUnsafeBufferPointer { events in writeEvents(events, estimate: Self.estimatedCount(of: events)) }
    }

    /// `[event, …]`, measured and written in one run through a cursor; through the plain writes
    /// only when escapes made the strings outgrow the buffer's room.
    mutating func writeEvents(_ events: UnsafeBufferPointer<LifecycleEvent>, estimate: Int) {
        var unrecorded: [Int] = []
        writeEvents(events, estimate: estimate, recording: false, ends: &unrecorded)
    }

    /// The same; with `recording`, `ends` gets where each event ends, counted from the `[`.
    mutating func writeEvents(_ events: UnsafeBufferPointer<LifecycleEvent>, estimate: Int, recording: Bool, ends: inout [Int]) {
        guard let first = events.baseAddress else {
            writeLiteral("[]")
            return
        }
        // A detail may hold any JSON (a result's value), which the cursor does not write. Read
        // where the events lie: a closure over the elements would copy each (retaining its strings).
        for index in events.indices where (first + index).pointee.detail != nil {
            writeEventsChecked(events, recording: recording, ends: &ends)
            return
        }
        if recording { ends.reserveCapacity(events.count) }
        let written = writeDirect(estimate: estimate) { cursor in
            let opening = cursor.address
            cursor.literal("[")
            for index in events.indices {
                if index > 0 { cursor.literal(",") }
                // The event's fields read where they lie: an event passed on by value would be
                // copied (all its strings retained) while the cursor writes.
                NavSnapshot.writeEvent(first + index, to: &cursor)
                if recording { ends.append(cursor.address - opening) }
            }
            cursor.literal("]")
        }
        guard !written else { return }
        ends.removeAll(keepingCapacity: true)
        writeEventsChecked(events, recording: recording, ends: &ends)
    }

    /// `[event, …]` through the plain writes.
    package mutating func writeEventsChecked(_ events: UnsafeBufferPointer<LifecycleEvent>) {
        var unrecorded: [Int] = []
        writeEventsChecked(events, recording: false, ends: &unrecorded)
    }

    private mutating func writeEventsChecked(_ events: UnsafeBufferPointer<LifecycleEvent>, recording: Bool, ends: inout [Int]) {
        let opening = writtenCount
        writeLiteral("[")
        if let first = events.baseAddress {
            for index in events.indices {
                if index > 0 { writeLiteral(",") }
                NavSnapshot.writeEvent(first + index, to: &self)
                if recording { ends.append(writtenCount - opening) }
            }
        }
        writeLiteral("]")
    }

    /// The bytes of `events` as a JSON array when no string needs an escape (an integer counted
    /// at its longest, a type at the longest name's length).
    static func estimatedCount(of events: UnsafeBufferPointer<LifecycleEvent>) -> Int {
        // `{"scene":`, `,"screen":`, `,"seq":`, `,"transition":`, `,"type":"`, `"}`, a comma.
        let fixed = 9 + 10 + 7 + 14 + 9 + 2 + 1
        var total = 2
        for index in events.indices {
            total += fixed + 20 + 20 + 15
            total += events[index].scene.map { $0.utf8.count + 2 } ?? 4
            total += events[index].screen.map { $0.utf8.count + 2 } ?? 4
            if let from = events[index].from { total += 8 + from.utf8.count + 2 }
            if let to = events[index].to { total += 6 + to.utf8.count + 2 }
        }
        return total
    }
}

/// Where an event is written: straight through a ``JSONWriter/Cursor`` into room made for a run
/// of events, or through the writer's plain writes when escapes outgrow that room. One writer,
/// ``writeEvent(_:to:)``, serves both, so the event's shape is written in one place.
protocol EventSink {
    mutating func literal(_ text: StaticString)
    mutating func int(_ number: Int)
    mutating func string(_ text: String)
    /// Any JSON value (an event's detail): only the plain writer writes one.
    mutating func value(_ json: JSONValue)
}

extension JSONWriter.Cursor: EventSink {
    /// Not written through a cursor: events with a detail take the plain writes.
    mutating func value(_ json: JSONValue) { decline() }
}

extension JSONWriter: EventSink {
    @inline(__always) mutating func literal(_ text: StaticString) { writeLiteral(text) }
    @inline(__always) mutating func int(_ number: Int) { writeInt(number) }
    @inline(__always) mutating func string(_ text: String) { writeString(text) }
    mutating func value(_ json: JSONValue) { write(json) }

    /// One event, read where it lies, for a writer that frames each event itself (an event
    /// stream's `lifecycle` message).
    package mutating func writeEvent(_ event: UnsafePointer<LifecycleEvent>) {
        NavSnapshot.writeEvent(event, to: &self)
    }
}

/// `{command?, from?, fromVersion?, keys?, scene, screen, seq, to?, toVersion?, transition, type,
/// value?}`, each key written with the punctuation around it; the event's fields read where they
/// lie (an event passed on by value would be copied, all its strings retained).
@inline(__always)
func writeEvent<Sink: EventSink>(_ event: UnsafePointer<LifecycleEvent>, to sink: inout Sink) {
    if let detail = event.pointee.detail {
        writeDetailedEvent(event, detail, to: &sink)
        return
    }
    if let from = event.pointee.from {
        sink.literal("{\"from\":")
        sink.string(from)
        sink.literal(",\"scene\":")
    } else {
        sink.literal("{\"scene\":")
    }
    if let scene = event.pointee.scene {
        sink.string(scene)
        sink.literal(",\"screen\":")
    } else {
        sink.literal("null,\"screen\":")
    }
    if let screen = event.pointee.screen {
        sink.string(screen)
        sink.literal(",\"seq\":")
    } else {
        sink.literal("null,\"seq\":")
    }
    sink.int(event.pointee.seq)
    if let to = event.pointee.to {
        sink.literal(",\"to\":")
        sink.string(to)
    }
    sink.literal(",\"transition\":")
    sink.int(event.pointee.transition)
    // One literal per kind: no string made and scanned for escapes.
    switch event.pointee.type {
    case .transitionStart: sink.literal(",\"type\":\"transitionStart\"}")
    case .awake: sink.literal(",\"type\":\"awake\"}")
    case .willAppear: sink.literal(",\"type\":\"willAppear\"}")
    case .didAppear: sink.literal(",\"type\":\"didAppear\"}")
    case .willDisappear: sink.literal(",\"type\":\"willDisappear\"}")
    case .didDisappear: sink.literal(",\"type\":\"didDisappear\"}")
    case .remove: sink.literal(",\"type\":\"remove\"}")
    case .transitionEnd: sink.literal(",\"type\":\"transitionEnd\"}")
    case .paramsChanged: sink.literal(",\"type\":\"paramsChanged\"}")
    case .stateChanged: sink.literal(",\"type\":\"stateChanged\"}")
    case .contextChanged: sink.literal(",\"type\":\"contextChanged\"}")
    case .result: sink.literal(",\"type\":\"result\"}")
    case .graphChanged: sink.literal(",\"type\":\"graphChanged\"}")
    }
}

/// An event with a detail (docs/design.md, "Routes and wire shapes": `keys`, `command`, `value`, `fromVersion`/`toVersion`),
/// keys in sorted order like every event: off the hot path, so written key by key.
func writeDetailedEvent<Sink: EventSink>(_ event: UnsafePointer<LifecycleEvent>, _ detail: LifecycleEvent.Detail, to sink: inout Sink) {
    sink.literal("{")
    if case .command(let name) = detail {
        sink.literal("\"command\":")
        sink.string(name)
        sink.literal(",")
    }
    if let from = event.pointee.from {
        sink.literal("\"from\":")
        sink.string(from)
        sink.literal(",")
    }
    if case .versions(let from, _) = detail {
        sink.literal("\"fromVersion\":")
        sink.int(from)
        sink.literal(",")
    }
    if case .keys(let keys) = detail {
        sink.literal("\"keys\":[")
        for index in keys.indices {
            if index > 0 { sink.literal(",") }
            sink.string(keys[index])
        }
        sink.literal("],")
    }
    sink.literal("\"scene\":")
    if let scene = event.pointee.scene { sink.string(scene) } else { sink.literal("null") }
    sink.literal(",\"screen\":")
    if let screen = event.pointee.screen { sink.string(screen) } else { sink.literal("null") }
    sink.literal(",\"seq\":")
    sink.int(event.pointee.seq)
    if let to = event.pointee.to {
        sink.literal(",\"to\":")
        sink.string(to)
    }
    if case .versions(_, let to) = detail {
        sink.literal(",\"toVersion\":")
        sink.int(to)
    }
    sink.literal(",\"transition\":")
    sink.int(event.pointee.transition)
    sink.literal(",\"type\":")
    sink.string(event.pointee.type.rawValue)
    if case .value(let value) = detail {
        sink.literal(",\"value\":")
        sink.value(value)
    }
    sink.literal("}")
}

extension Array where Element == LifecycleEvent {
    /// The events as a JSON array, for a store.
    package var jsonBytes: [UInt8] {
        var unrecorded: [Int] = []
        return jsonBytes(recording: false, ends: &unrecorded)
    }

    /// The same, and where each event ends in it (one past its `}`): a change that is sent to
    /// watchers cuts each event's `lifecycle` message out of it (``JSONWriter/writeLifecycleMessages(_:json:ends:)``).
    package func jsonBytes(eventEnds: inout [Int]) -> [UInt8] {
        jsonBytes(recording: true, ends: &eventEnds)
    }

    private func jsonBytes(recording: Bool, ends: inout [Int]) -> [UInt8] {
        withUnsafeBufferPointer { events in
            let estimate = JSONWriter.estimatedCount(of: events)
            // Some room to spare, for a few escapes.
            var writer = JSONWriter(reservingCapacity: estimate + 32)
            writer.writeEvents(events, estimate: estimate, recording: recording, ends: &ends)
            return writer.finish()
        }
    }
}
