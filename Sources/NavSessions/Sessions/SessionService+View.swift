import NavCore
import NavJSON
import NavWire

/// The session view (docs/design.md, "Routes and wire shapes", with "Actions"), written once for an answer or for every
/// watcher of a change.
extension SessionService {
    /// What the session's top screen can do now; none when its graph version is not loaded.
    package func actions(of session: StoredSession) -> Actions {
        graphs.version(session.graphName, session.graphVersion)?.navigator.actions(for: session.state)
            ?? Actions(links: [], exit: false, back: 0)
    }

    /// The answer to an applied change: the session view with its events. A change its watchers
    /// were sent has its view written already (``Mutation/watchedView``): the events are put into
    /// that instead of writing the view again.
    package func answer(to mutation: Mutation) -> [UInt8] {
        if let watched = mutation.watchedView {
            return JSONWriter.spliceEvents(mutation.eventsJSON, into: watched.bytes, at: watched.eventsOffset)
        }
        return view(of: mutation.session, events: mutation.events, eventsJSON: mutation.eventsJSON)
    }

    /// The session view as JSON: with `events` after a change, with both tokens at creation.
    package func view(
        of session: StoredSession, events: [LifecycleEvent]? = nil, eventsJSON: [UInt8]? = nil,
        token: (write: String, watch: String)? = nil
    ) -> [UInt8] {
        viewAndEventsOffset(of: session, events: events, eventsJSON: eventsJSON, token: token).bytes
    }

    /// The view's bytes and where its `events` go (``JSONWriter/spliceEvents(_:into:at:)``).
    private func viewAndEventsOffset(
        of session: StoredSession, events: [LifecycleEvent]? = nil, eventsJSON: [UInt8]? = nil,
        token: (write: String, watch: String)? = nil
    ) -> (bytes: [UInt8], eventsOffset: Int) {
        // Close to the size of a plain session's view (a screen without params or state writes
        // about 110 bytes; its params also appear in the path; the actions take about 100): one
        // allocation of about the right size. (Under glibc's malloc, which navd used before
        // jemalloc, a request of 1 KiB or more first folded its free chunks together, reading
        // chunks all over a heap of a million sessions; this kept a GET of up to five screens
        // below that.) A larger view grows the buffer.
        let eventBytes = eventsJSON?.count ?? 96 * (events?.count ?? 0)
        var writer = JSONWriter(
            reservingCapacity: 288 + 128 * session.state.screens.count + session.state.pathText.utf8.count + eventBytes
                + (token == nil ? 0 : 192)
        )
        let eventsOffset = writer.writeSessionView(
            id: session.id, graphName: session.graphName, graphVersion: session.graphVersion, state: session.state,
            actions: actions(of: session), events: events, eventsJSON: eventsJSON, token: token
        )
        return (writer.finish(), eventsOffset)
    }

    /// Hands an applied change to the session's watchers, as stream messages written once.
    /// - Returns: the view written for them (nil when the session has none), which the change's
    ///   answer reuses.
    func publish(_ mutation: Mutation) -> (bytes: [UInt8], eventsOffset: Int)? {
        var written: (bytes: [UInt8], eventsOffset: Int)?
        live.publish(mutation.session.id) {
            let viewAndOffset = viewAndEventsOffset(of: mutation.session)
            written = viewAndOffset
            let view = viewAndOffset.bytes
            var messages = JSONWriter(reservingCapacity: mutation.eventsJSON.count + 48 * mutation.events.count + view.count + 32)
            messages.writeLifecycleMessages(mutation.events, json: mutation.eventsJSON, ends: mutation.eventEnds)
            messages.writeViewMessage(view)
            let first = mutation.events.first?.seq ?? mutation.session.state.eventCounter
            return LiveChange(
                session: mutation.session, events: mutation.events, seqs: first...max(first, mutation.session.state.eventCounter),
                messages: messages.finish()
            )
        }
        return written
    }
}
