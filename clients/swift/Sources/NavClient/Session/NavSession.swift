import OpenAPIRuntime

/// One session of a navd, acted on with one token (its own, its watch token, or the admin
/// token): every session operation of openapi.yaml as a typed call.
///
/// Every change answers a ``MutationResult``: the session view after it and the lifecycle events
/// it emitted, in order (none for a no-op). A refusal throws ``NavClientError/problem(_:)`` and
/// changes nothing. `ifMatch` sends `If-Match: "<version>"` (412 `version_conflict` unless the
/// session is at that version); `idempotencyKey` sends `Idempotency-Key` (a retry gets the
/// first answer again).
public struct NavSession: Sendable {
    public let id: String
    /// The client, with the token this session is acted on with.
    public let client: NavClient

    public init(id: String, client: NavClient) {
        self.id = id
        self.client = client
    }

    var api: Client { client.api }
    var path: Operations.Navigate.Input.Path { .init(id: id) }

    static func entityTag(_ version: Int?) -> String? {
        version.map { "\"\($0)\"" }
    }

    /// `GET /v1/sessions/{id}`: the session view.
    public func view() async throws(NavClientError) -> SessionView {
        try await perform("getSession") {
            let output = try await api.getSession(path: .init(id: id))
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "getSession") }
            return try ok.body.json
        }
    }

    /// `DELETE /v1/sessions/{id}`: ends the session (its watchers get `end` with `deleted`).
    public func delete(ifMatch version: Int? = nil) async throws(NavClientError) {
        try await perform("deleteSession") {
            let output = try await api.deleteSession(path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version)))
            guard case .noContent = output else { throw NavClientError.unexpected(output, operation: "deleteSession") }
        }
    }

    /// `POST …/navigate`: a deep link (`list_news/show_news(id=44)`, `^/top!login`, `..`).
    public func navigate(_ path: String, ifMatch version: Int? = nil, idempotencyKey: String? = nil) async throws(NavClientError)
        -> MutationResult
    {
        try await perform("navigate") {
            let output = try await api.navigate(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey),
                body: .json(.init(path: path))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "navigate") }
            return try ok.body.json
        }
    }

    /// `POST …/transitions`: a named link of the top screen's scene, or a global link.
    public func link(
        _ name: String, params: [String: ParamValue] = [:], ifMatch version: Int? = nil, idempotencyKey: String? = nil
    ) async throws(NavClientError) -> MutationResult {
        try await perform("applyTransition") {
            let output = try await api.applyTransition(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey),
                body: .json(.init(name: name, params: params.isEmpty ? nil : .init(additionalProperties: params)))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "applyTransition") }
            return try ok.body.json
        }
    }

    /// `POST …/exit`: the top screen leaves; `result` goes to the screen revealed (a `result` event).
    public func exit(result: JSONValue? = nil, ifMatch version: Int? = nil, idempotencyKey: String? = nil) async throws(NavClientError)
        -> MutationResult
    {
        try await perform("exitScene") {
            let output = try await api.exitScene(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey),
                body: result.map { .json(.init(result: $0.container)) }
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "exitScene") }
            return try ok.body.json
        }
    }

    /// `POST …/back`: `count` screens back (1 when nil); `result` goes to the screen revealed.
    public func back(
        _ count: Int? = nil, result: JSONValue? = nil, ifMatch version: Int? = nil, idempotencyKey: String? = nil
    ) async throws(NavClientError) -> MutationResult {
        try await perform("goBack") {
            let body: Operations.GoBack.Input.Body? =
                count == nil && result == nil ? nil : .json(.init(count: count, result: result?.container))
            let output = try await api.goBack(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey), body: body
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "goBack") }
            return try ok.body.json
        }
    }

    /// `PUT …/screens/{screen}/params`: replaces the top screen's params.
    public func setParams(screen: String, _ params: [String: ParamValue], ifMatch version: Int? = nil) async throws(NavClientError)
        -> MutationResult
    {
        try await perform("setParams") {
            let output = try await api.setParams(
                path: .init(id: id, screen: screen), headers: .init(ifMatch: Self.entityTag(version)),
                body: .json(.init(additionalProperties: params))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "setParams") }
            return try ok.body.json
        }
    }

    /// `PATCH …/screens/{screen}/state`: an RFC 7396 merge patch of a screen's state (`nil`
    /// removes a member).
    public func patchState(screen: String, _ patch: [String: JSONValue], ifMatch version: Int? = nil) async throws(NavClientError)
        -> MutationResult
    {
        try await perform("patchState") {
            let output = try await api.patchState(
                path: .init(id: id, screen: screen), headers: .init(ifMatch: Self.entityTag(version)),
                body: .applicationMergePatchJson(patch.container)
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "patchState") }
            return try ok.body.json
        }
    }

    /// `POST …/screens/{screen}/commands`: a command of the screen's scene (its `when` guards,
    /// its state patch, then its navigation, as one change).
    public func command(
        _ name: String, screen: String, args: [String: JSONValue]? = nil, ifMatch version: Int? = nil, idempotencyKey: String? = nil
    ) async throws(NavClientError) -> MutationResult {
        try await perform("runCommand") {
            let output = try await api.runCommand(
                path: .init(id: id, screen: screen), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey),
                body: .json(.init(name: name, args: args?.container))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "runCommand") }
            return try ok.body.json
        }
    }

    /// `PATCH …/context`: an RFC 7396 merge patch of the session context. When it satisfies the
    /// requirements of a `pending` navigation, that navigation follows in the same change.
    /// With `--backend-token`, this needs that token (``NavClient/authorized(by:)``).
    public func patchContext(_ patch: [String: JSONValue], ifMatch version: Int? = nil) async throws(NavClientError) -> MutationResult {
        try await perform("patchContext") {
            let output = try await api.patchContext(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version)), body: .applicationMergePatchJson(patch.container)
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "patchContext") }
            return try ok.body.json
        }
    }

    /// `POST …/intents`: a batch, applied in order, all or nothing, as one version. A refusal
    /// names the item (`index`).
    public func batch(_ intents: [BatchItem], ifMatch version: Int? = nil, idempotencyKey: String? = nil) async throws(NavClientError)
        -> MutationResult
    {
        try await perform("applyBatch") {
            let output = try await api.applyBatch(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey),
                body: .json(.init(intents: intents))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "applyBatch") }
            return try ok.body.json
        }
    }

    /// `POST …/upgrade`: moves the session to the newest (or the given) version of its graph.
    public func upgrade(to graphVersion: Int? = nil, ifMatch version: Int? = nil, idempotencyKey: String? = nil)
        async throws(NavClientError) -> MutationResult
    {
        try await perform("upgradeSession") {
            let output = try await api.upgradeSession(
                path: .init(id: id), headers: .init(ifMatch: Self.entityTag(version), idempotencyKey: idempotencyKey),
                body: .json(.init(version: graphVersion))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "upgradeSession") }
            return try ok.body.json
        }
    }

    /// `POST …/confirm`: applies what a `confirmation_required` refusal asked to confirm, if the
    /// session has not changed since (else 412 `version_conflict`).
    public func confirm(_ confirmation: Confirmation, idempotencyKey: String? = nil) async throws(NavClientError) -> MutationResult {
        try await confirm(token: confirmation.token, idempotencyKey: idempotencyKey)
    }

    /// `POST …/confirm` with a confirmation token.
    public func confirm(token: String, idempotencyKey: String? = nil) async throws(NavClientError) -> MutationResult {
        try await perform("confirm") {
            let output = try await api.confirm(
                path: .init(id: id), headers: .init(idempotencyKey: idempotencyKey), body: .json(.init(token: token))
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "confirm") }
            return try ok.body.json
        }
    }

    /// `GET …/events`: the retained events after `after`, at most `limit`; with `wait` (1 to 60
    /// seconds) a long poll that answers as soon as there is one.
    public func events(after: Int = 0, limit: Int? = nil, wait: Int? = nil) async throws(NavClientError) -> EventLog {
        try await perform("listEvents") {
            let output = try await api.listEvents(
                path: .init(id: id), query: .init(after: after, limit: limit, wait: wait),
                headers: .init(accept: [.init(contentType: .json)])
            )
            guard case .ok(let ok) = output else { throw NavClientError.unexpected(output, operation: "listEvents") }
            return try ok.body.json
        }
    }

    /// `GET …/events` with `Accept: text/event-stream`: the session followed live, as typed
    /// messages, resumed after a dropped connection with nothing missed and nothing twice
    /// (``EventStream``).
    ///
    /// - Parameter after: replay the retained events after this `seq` first; nil starts with the
    ///   current view and what happens from then on.
    public func watch(after: Int? = nil, options: EventStream.Options = .init()) -> EventStream {
        EventStream(session: self, after: after, options: options)
    }
}
