import NavCore
import NavJSON

// The snapshot a store keeps, written; `Snapshot.swift` reads it back. Its screens are written
// here too: the stored shape of a screen is owned by storage. The API answers screens of the same
// shape by decision, through these writers (StoredShapeTests holds openapi.yaml's `Screen` to
// it), so that a change to either shape fails a test instead of migrating stored snapshots.

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

    /// `[screen, …]`.
    package mutating func writeScreens(_ screens: [Screen]) {
        writeLiteral("[")
        // By index: the enumerated sequence would copy each screen (and retain all its fields).
        for index in screens.indices {
            if index > 0 { writeLiteral(",") }
            writeScreen(screens[index])
        }
        writeLiteral("]")
    }

    /// `{container, deps, id, params, scene, segue, state, tabs?}`.
    package mutating func writeScreen(_ screen: Screen) {
        writeLiteral("{\"container\":")
        writeString(screen.container.rawValue)
        writeLiteral(",\"deps\":")
        write(.object(screen.deps))
        writeLiteral(",\"id\":")
        writeString(screen.id)
        writeLiteral(",\"params\":{")
        if screen.params.count == 1, let (key, value) = screen.params.first {
            writeString(key)
            writeLiteral(":")
            write(value.json)
        } else {
            for (position, key) in screen.params.keys.sorted().enumerated() {
                if position > 0 { writeLiteral(",") }
                writeString(key)
                writeLiteral(":")
                if let value = screen.params[key] { write(value.json) }
            }
        }
        writeLiteral("},\"scene\":")
        writeString(screen.scene)
        writeLiteral(",\"segue\":")
        writeString(screen.segue.rawValue)
        writeLiteral(",\"state\":")
        write(screen.state)
        if let tabs = screen.tabs {
            writeLiteral(",\"tabs\":{\"saved\":{")
            for (position, name) in tabs.saved.keys.sorted().enumerated() {
                if position > 0 { writeLiteral(",") }
                writeString(name)
                writeLiteral(":")
                writeScreens(tabs.saved[name] ?? [])
            }
            writeLiteral("},\"selected\":")
            writeString(tabs.selected)
            writeLiteral("}")
        }
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
