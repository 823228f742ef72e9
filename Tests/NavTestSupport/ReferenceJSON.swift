import NavCore
import NavJSON
import NavSnapshot
import NavWire

// The wire shapes of docs/design.md, "Routes and wire shapes" built as `JSONValue`s, the slow and obvious way: an encoding
// independent of NavWire's writers, for the tests to hold those writers to (their bytes must be
// these values written canonically).

extension Screen {
    /// The wire shape of a screen (docs/design.md, "Routes and wire shapes"): `{id, scene, segue, container, params, deps, state}`
    /// plus `tabs: {selected, saved}` on a tabs screen.
    var referenceJSON: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id),
            "scene": .string(scene),
            "segue": .string(segue.rawValue),
            "container": .string(container.rawValue),
            "params": .object(params.mapValues(\.json)),
            "deps": .object(deps),
            "state": state
        ]
        if let tabs {
            members["tabs"] = [
                "selected": .string(tabs.selected),
                "saved": .object(tabs.saved.mapValues { .array($0.map(\.referenceJSON)) })
            ]
        }
        return .object(members)
    }
}

extension LifecycleEvent {
    /// The wire shape of an event: `{seq, type, screen, scene, transition, from?, to?}`.
    var referenceJSON: JSONValue {
        var members: [String: JSONValue] = [
            "seq": .int(seq),
            "type": .string(type.rawValue),
            "screen": screen.map(JSONValue.string) ?? .null,
            "scene": scene.map(JSONValue.string) ?? .null,
            "transition": .int(transition)
        ]
        if let from { members["from"] = .string(from) }
        if let to { members["to"] = .string(to) }
        return .object(members)
    }
}

extension SessionState {
    /// The whole state as JSON, with its schema version, for a store.
    var referenceSnapshot: JSONValue {
        [
            "schema": .int(Self.snapshotSchema),
            "version": .int(version),
            "screenCounter": .int(screenCounter),
            "eventCounter": .int(eventCounter),
            "context": .object(context),
            "screens": .array(screens.map(\.referenceJSON))
        ]
    }
}
