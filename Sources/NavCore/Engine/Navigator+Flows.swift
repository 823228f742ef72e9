import NavJSON

/// The flows' intents (docs/design.md, "Flows") made of others or changing the session as a whole: context changes that
/// resume a pending navigation, screen commands, and batches. Each is one applied change: the
/// version goes up by exactly one however many steps it took.
extension Navigator {
    /// An RFC 7396 merge patch of the context (event `contextChanged` with the keys that changed).
    /// With a `pending` navigation, the same change then navigates there if the new context lets
    /// it (its events follow `contextChanged`, `pending` is cleared); while the requirements are
    /// still unmet `pending` waits; refused for any other reason, `pending` is cleared and the
    /// context changes alone. A resume that would leave a screen asking first needs `confirmed`.
    func patchContext(_ patch: JSONValue, state: SessionState, confirmed: Bool) throws(NavError) -> Outcome {
        guard let members = patch.objectValue, let context = JSONValue.object(state.context).mergePatched(with: patch).objectValue
        else { throw NavError(.invalidRequest, "a context patch is a JSON object (RFC 7396)", param: "context") }
        let keys = members.keys.filter { state.context[$0] != context[$0] }.sorted()
        guard !keys.isEmpty else { return Outcome(state: state, events: []) }
        let size = JSONValue.object(context).jsonBytes.count
        guard size <= limits.maxContextBytes else {
            throw NavError(
                .invalidRequest, "the context would be \(size) bytes of JSON (limit \(limits.maxContextBytes))", param: "context")
        }
        var next = state
        next.context = context
        next.eventCounter += 1
        let changed = LifecycleEvent(seq: next.eventCounter, transition: state.version + 1, type: .contextChanged, detail: .keys(keys))
        if let pending = state.pending {
            do {
                var resumed = try navigate("^" + pending, from: next, confirmed: confirmed, redirects: nil)
                if resumed.changed {
                    resumed.events.insert(changed, at: 0)
                    return resumed
                }
                next.pending = nil  // already there
            } catch let error where error.code == .transitionRefused {
                // Still not allowed in: it keeps waiting.
            } catch let error where error.code == .confirmationRequired {
                throw error
            } catch {
                next.pending = nil
            }
        }
        next.version += 1
        return Outcome(state: next, events: [changed])
    }

    /// A command of the screen's scene: its guards checked against the screen's state, then its
    /// patch (with `{"$arg": k}` values taken from `args`) and its navigation, as one change.
    func command(
        _ name: String, of id: String, args: [String: JSONValue], state: SessionState, confirmed: Bool
    ) throws(NavError) -> Outcome {
        guard let screen = state.allScreens.first(where: { $0.id == id }) else {
            throw NavError(.notFound, "no screen '\(id)' in this session")
        }
        guard let command = scene(of: screen)?.scene.commands[name] else {
            throw NavError(.unknownCommand, "'\(screen.scene)' has no command '\(name)'")
        }
        for condition in command.guards {
            let value = condition.pointer.value(in: screen.state) ?? .null
            guard condition.values.contains(value) else {
                let allowed = condition.values.map(\.jsonString).joined(separator: ", ")
                throw NavError(
                    .commandRefused, "'\(name)' needs \(condition.pointer) to be one of \(allowed); it is \(value.jsonString)",
                    pointer: condition.pointer.description
                )
            }
        }
        var used: Set<String> = []
        let patch = try Self.filling(command.patch, with: args, command: name, used: &used)
        for key in args.keys.sorted() where !used.contains(key) {
            throw NavError(.invalidParams, "command '\(name)' takes no argument '\(key)'", param: key)
        }
        var patched = try patchState(screen: id, patch: patch, state: state)
        for index in patched.events.indices { patched.events[index].detail = .command(name) }
        guard let path = command.navigate else { return patched }
        let navigation = try navigate(path, from: patched.state, confirmed: confirmed)
        return Self.oneChange(from: state, to: navigation.state, events: patched.events + navigation.events)
    }

    /// `patch` with each `{"$arg": "k"}` replaced by `args[k]`; a missing argument is `invalid_params`.
    private static func filling(
        _ patch: JSONValue, with args: [String: JSONValue], command: String, used: inout Set<String>
    ) throws(NavError) -> JSONValue {
        switch patch {
        case .object(let members):
            if members.count == 1, let key = members["$arg"]?.stringValue {
                guard let value = args[key] else {
                    throw NavError(.invalidParams, "command '\(command)' needs the argument '\(key)'", param: key)
                }
                used.insert(key)
                return value
            }
            var filled: [String: JSONValue] = [:]
            for (key, value) in members { filled[key] = try filling(value, with: args, command: command, used: &used) }
            return .object(filled)
        case .array(let elements):
            var filled: [JSONValue] = []
            for element in elements { filled.append(try filling(element, with: args, command: command, used: &used)) }
            return .array(filled)
        default:
            return patch
        }
    }

    /// Intents applied in order, all or nothing: a refusal names its item (`index`) and changes
    /// nothing; success is one change carrying every item's events.
    func batch(_ intents: [Intent], to state: SessionState, confirmed: Bool) throws(NavError) -> Outcome {
        guard intents.count <= limits.maxBatchItems else {
            throw NavError(.invalidRequest, "a batch holds at most \(limits.maxBatchItems) intents, not \(intents.count)", param: "intents")
        }
        var current = state
        var events: [LifecycleEvent] = []
        for (index, intent) in intents.enumerated() {
            do throws(NavError) {
                if case .batch = intent { throw NavError(.invalidRequest, "a batch cannot hold a batch", param: "intents") }
                let outcome = try apply(intent, to: current, confirmed: confirmed)
                current = outcome.state
                events += outcome.events
            } catch {
                var refusal = error
                refusal.index = index
                throw refusal
            }
        }
        return Self.oneChange(from: state, to: current, events: events)
    }

    /// Steps applied one after another (each counted a version), made one change: the version up
    /// by exactly one from `state`, every event of that version. No events: a no-op.
    static func oneChange(from state: SessionState, to final: SessionState, events: [LifecycleEvent]) -> Outcome {
        guard !events.isEmpty else { return Outcome(state: state, events: []) }
        var next = final
        next.version = state.version + 1
        var events = events
        for index in events.indices { events[index].transition = next.version }
        return Outcome(state: next, events: events)
    }
}
