import NavCore
import NavJSON

// The snapshot a store keeps, and the event log it keeps, read back. Both are written in this
// module (`SnapshotWriter.swift`, `EventLogWriter.swift`): one writer per shape.

extension LifecycleEvent {
    /// Reads an event back from its stored shape (the event log in a store).
    package init?(json: JSONValue) {
        guard let seq = json["seq"]?.intValue, let typeName = json["type"]?.stringValue,
            let type = Kind(rawValue: typeName), let transition = json["transition"]?.intValue
        else { return nil }
        self.init(
            seq: seq, type: type, screen: json["screen"]?.stringValue, scene: json["scene"]?.stringValue,
            transition: transition, from: json["from"]?.stringValue, to: json["to"]?.stringValue, detail: Detail(json: json)
        )
    }
}

extension LifecycleEvent.Detail {
    /// The members the detail adds to an event's stored shape.
    package var json: JSONValue {
        switch self {
        case .keys(let keys): ["keys": .array(keys.map(JSONValue.string))]
        case .command(let name): ["command": .string(name)]
        case .value(let value): ["value": value]
        case .versions(let from, let to): ["fromVersion": .int(from), "toVersion": .int(to)]
        }
    }

    /// The detail an event's stored shape carries, if any (`writeDetailedEvent` writes it).
    package init?(json: JSONValue) {
        if let keys = json["keys"]?.arrayValue {
            self = .keys(keys.compactMap(\.stringValue))
        } else if let name = json["command"]?.stringValue {
            self = .command(name)
        } else if let from = json["fromVersion"]?.intValue, let to = json["toVersion"]?.intValue {
            self = .versions(from: from, to: to)
        } else if let value = json["value"] {
            self = .value(value)
        } else {
            return nil
        }
    }
}

/// A stored session that cannot be restored on its graph.
package struct SnapshotError: Error, Sendable, Hashable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

extension SessionState {
    /// The snapshot format this version of navd writes: 2 added `pending` (docs/design.md, "Redirect and resume").
    package static let snapshotSchema = 2
    /// The snapshot formats this version reads: 1 is 2 without `pending` (so reads as none).
    package static let readableSnapshotSchemas = 1...2

    /// Restores a snapshot, checking it against `graph`: a screen whose scene is gone, a broken
    /// tab bar or a duplicate id is an error, never a crash.
    package init(snapshot: JSONValue, graph: Graph) throws(SnapshotError) {
        guard let schema = snapshot["schema"]?.intValue, Self.readableSnapshotSchemas.contains(schema) else {
            throw SnapshotError(
                message: "snapshot schema \(snapshot["schema"]?.jsonString ?? "missing") is not one of \(Self.readableSnapshotSchemas)"
            )
        }
        guard let version = snapshot["version"]?.intValue, let screenCounter = snapshot["screenCounter"]?.intValue,
            let eventCounter = snapshot["eventCounter"]?.intValue, let context = snapshot["context"]?.objectValue,
            let screens = snapshot["screens"]?.arrayValue
        else { throw SnapshotError(message: "snapshot is missing version, counters, context or screens") }
        var seen = Set<String>()
        self.init(
            version: version, screens: try Self.screens(screens, graph: graph, seen: &seen), context: context,
            screenCounter: screenCounter, eventCounter: eventCounter, pending: snapshot["pending"]?.stringValue
        )
        guard !self.screens.isEmpty else { throw SnapshotError(message: "snapshot has an empty stage") }
    }

    private static func screens(_ elements: [JSONValue], graph: Graph, seen: inout Set<String>) throws(SnapshotError) -> [Screen] {
        var result: [Screen] = []
        for element in elements {
            guard let id = element["id"]?.stringValue, let sceneName = element["scene"]?.stringValue,
                let segue = element["segue"]?.stringValue.flatMap(Segue.init(rawValue:)),
                let container = element["container"]?.stringValue.flatMap(Container.init(rawValue:)),
                let params = element["params"]?.objectValue, let deps = element["deps"]?.objectValue,
                let state = element["state"], state.objectValue != nil
            else { throw SnapshotError(message: "snapshot has a malformed screen") }
            guard let scene = graph.scenes[sceneName] else {
                throw SnapshotError(message: "screen \(id): scene '\(sceneName)' is not in graph '\(graph.name)'")
            }
            guard seen.insert(id).inserted else { throw SnapshotError(message: "screen id \(id) appears twice") }
            var typed: [String: ParamValue] = [:]
            for (key, value) in params {
                // A key the path grammar cannot print would make the stage's path read back as another.
                guard key.isValidPathName else {
                    throw SnapshotError(message: "screen \(id): parameter name '\(key)' is not a path name")
                }
                guard let text = ParamValue.text(of: value) else {
                    throw SnapshotError(message: "screen \(id): parameter '\(key)' is not a scalar")
                }
                let type = scene.params?[key]?.type ?? .string
                guard scene.params == nil || scene.params?[key] != nil, let parsed = ParamValue(text: text, as: type) else {
                    throw SnapshotError(message: "screen \(id): parameter '\(key)' no longer fits scene '\(sceneName)'")
                }
                typed[key] = parsed
            }
            var screen = Screen(
                id: id, scene: sceneName, segue: segue, container: container, params: ScreenParams(typed), deps: deps, state: state)
            if let tabs = element["tabs"] {
                guard scene.tabs != nil, let selected = tabs["selected"]?.stringValue, let saved = tabs["saved"]?.objectValue else {
                    throw SnapshotError(message: "screen \(id): tab bar does not fit scene '\(sceneName)'")
                }
                var stacks: [String: [Screen]] = [:]
                for (name, stack) in saved {
                    guard let stack = stack.arrayValue else { throw SnapshotError(message: "screen \(id): malformed saved tab") }
                    stacks[name] = try screens(stack, graph: graph, seen: &seen)
                }
                screen.tabs = TabsState(selected: selected, saved: stacks)
            } else if scene.tabs != nil {
                throw SnapshotError(message: "screen \(id): tabs scene '\(sceneName)' has no tab bar")
            }
            result.append(screen)
        }
        return result
    }
}
