import NavCore
import NavJSON
import NavSnapshot

/// Writes the hot wire shapes straight into bytes, keys in sorted order, without building
/// `JSONValue` dictionaries first: the same bytes as `Wire`'s values through `JSONWriter`,
/// at a fraction of the allocations (the session view is most of every answer). A screen and an
/// event are answered in the shapes a store keeps them, written by NavSnapshot's writers: a
/// change's events are written once, for the store and the answer.
extension JSONWriter {
    /// `{actions, context, events?, graph, id, path, pending?, screens, token?, version, watchToken?}`.
    /// - Parameters:
    ///   - eventsJSON: `events` already written as a JSON array, if at hand.
    ///   - token: the session's write token and read-only `watchToken`, in the create answer only.
    /// - Returns: where `events` goes (or went) in the bytes written: just after `context`, so
    ///   that a view written without them can take them later (``spliceEvents(_:into:at:)``).
    @discardableResult
    package mutating func writeSessionView(
        id: String, graphName: String, graphVersion: Int, state: SessionState, actions: Actions, events: [LifecycleEvent]? = nil,
        eventsJSON: [UInt8]? = nil, token: (write: String, watch: String)? = nil
    ) -> Int {
        writeLiteral("{\"actions\":")
        writeActions(actions)
        writeLiteral(",\"context\":")
        write(.object(state.context))
        let eventsOffset = writtenCount
        if let events {
            writeLiteral(",\"events\":")
            if let eventsJSON { writeRaw(bytes: eventsJSON) } else { writeEvents(events) }
        }
        writeLiteral(",\"graph\":{\"name\":")
        writeString(graphName)
        writeLiteral(",\"version\":")
        writeInt(graphVersion)
        writeLiteral("},\"id\":")
        writeString(id)
        writeLiteral(",\"path\":")
        // A change's last event, `transitionEnd`, carries the canonical path it led to.
        if let end = events?.last, end.type == .transitionEnd, let path = end.to {
            writeString(path)
        } else {
            writeString(state.pathText)
        }
        if let pending = state.pending {
            writeLiteral(",\"pending\":")
            writeString(pending)
        }
        writeLiteral(",\"screens\":")
        writeScreens(state.screens)
        if let token {
            writeLiteral(",\"token\":")
            writeString(token.write)
        }
        writeLiteral(",\"version\":")
        writeInt(state.version)
        if let token {
            writeLiteral(",\"watchToken\":")
            writeString(token.watch)
        }
        writeLiteral("}")
        return eventsOffset
    }

    /// A session view written without `events` (`view`, with `eventsOffset` as
    /// ``writeSessionView(id:graphName:graphVersion:state:actions:events:eventsJSON:token:)``
    /// answered) and `eventsJSON` made one answer: the same bytes as writing the view with them,
    /// at the cost of a copy. A change its watchers are sent is written once so.
    package static func spliceEvents(_ eventsJSON: [UInt8], into view: [UInt8], at eventsOffset: Int) -> [UInt8] {
        guard eventsOffset > 0, eventsOffset < view.count else { return view }
        var answer: [UInt8] = []
        answer.reserveCapacity(view.count + eventsJSON.count + 10)
        answer.append(contentsOf: view[..<eventsOffset])
        answer.append(contentsOf: ",\"events\":".utf8)
        answer.append(contentsOf: eventsJSON)
        answer.append(contentsOf: view[eventsOffset...])
        return answer
    }

    /// `{back, exit, links: [{name, params}, …]}` (docs/design.md, "Actions").
    mutating func writeActions(_ actions: Actions) {
        writeLiteral("{\"back\":")
        writeInt(actions.back)
        writeLiteral(actions.exit ? ",\"exit\":true,\"links\":[" : ",\"exit\":false,\"links\":[")
        var first = true
        // Iterated, not indexed: the global part skips the links the scene hides in O(1) a link.
        for link in actions.links {
            writeLiteral(first ? "{\"name\":" : ",{\"name\":")
            first = false
            writeString(link.name)
            writeLiteral(",\"params\":[")
            for (position, param) in link.params.enumerated() {
                if position > 0 { writeLiteral(",") }
                writeString(param)
            }
            writeLiteral("]}")
        }
        writeLiteral("]}")
    }
}

extension Screen {
    /// The screen's wire shape on its own, which is its stored shape (answers write their screens
    /// in place).
    package var wireBytes: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.writeScreen(self)
        return writer.finish()
    }
}

extension JSONWriter {
    /// A page of the event log, `{events, next}`, that ends once it holds `maxBytes` of events (it
    /// always holds one): `next`, the `after` of the following page, is then the `seq` of its last
    /// event, else the `next` given. - Returns: how many of `events` it holds.
    @discardableResult
    package mutating func writeEventPage(_ events: [LifecycleEvent], next: Int, maxBytes: Int = .max) -> Int {
        let start = writtenCount
        var written = 0
        writeLiteral("{\"events\":[")
        events.withUnsafeBufferPointer { events in
            guard let first = events.baseAddress else { return }
            for index in events.indices {
                if index > 0 {
                    if writtenCount - start >= maxBytes { break }
                    writeLiteral(",")
                }
                writeEvent(first + index)
                written += 1
            }
        }
        writeLiteral("],\"next\":")
        writeInt(written < events.count ? events[written - 1].seq : next)
        writeLiteral("}")
        return written
    }
}
