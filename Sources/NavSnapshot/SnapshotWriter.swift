import NavCore
import NavJSON
import NavWire

// The snapshot a store keeps, written; `Snapshot.swift` reads it back. Its screens are written by
// NavWire's screen writer.

extension JSONWriter {
    /// The snapshot a store keeps: written directly
    /// (`{context, eventCounter, graphVersion?, pending?, schema, screenCounter, screens, version}`).
    /// `graphVersion` is the graph version the session runs on (a graph upgrade changes it).
    package mutating func writeSnapshot(_ state: SessionState, graphVersion: Int? = nil) {
        writeLiteral("{\"context\":")
        write(.object(state.context))
        writeLiteral(",\"eventCounter\":")
        writeInt(state.eventCounter)
        if let graphVersion {
            writeLiteral(",\"graphVersion\":")
            writeInt(graphVersion)
        }
        if let pending = state.pending {
            writeLiteral(",\"pending\":")
            writeString(pending)
        }
        writeLiteral(",\"schema\":")
        writeInt(SessionState.snapshotSchema)
        writeLiteral(",\"screenCounter\":")
        writeInt(state.screenCounter)
        writeLiteral(",\"screens\":")
        writeScreens(state.screens)
        writeLiteral(",\"version\":")
        writeInt(state.version)
        writeLiteral("}")
    }
}

extension SessionState {
    /// The snapshot as JSON bytes, for a store.
    package var snapshotBytes: [UInt8] {
        snapshotBytes(graphVersion: nil)
    }

    /// The snapshot as JSON bytes with the graph version the session runs on.
    package func snapshotBytes(graphVersion: Int?) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 144 + 256 * screens.count)
        writer.writeSnapshot(self, graphVersion: graphVersion)
        return writer.finish()
    }
}
