import NavCore
import NavJSON
import NavWire

/// Leave confirmations (docs/design.md, "Leave confirmation"): the token of a `confirmation_required` refusal carries the
/// session version it was given at and the refused intent, sealed with a MAC keyed by the
/// session's token digest (which never leaves the server). Nothing is stored, any process of a
/// shared store accepts it, and it dies with the next applied change, since the version it names
/// is then no longer the session's.
///
/// `<version>.<intent, base64url JSON in the batch-item form>.<MAC, 32 hex digits>`.
enum Confirmation {
    /// `{token, screen, intent}` for a refusal of `intent` that asks to leave `screen`.
    static func json(for intent: Intent, screen: String, session: StoredSession) -> JSONValue {
        let intentJSON = intent.wireJSON
        let body = String(session.state.version) + "." + Base64.encode(intentJSON.jsonBytes)
        return ["token": .string(body + "." + mac(body, session)), "screen": .string(screen), "intent": intentJSON]
    }

    /// The intent a token names, read without checking that it is genuine: only to tell which
    /// credentials its confirmation needs. `nil` for a token of another shape.
    static func claimedIntent(_ token: String) -> Intent? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64.decode(parts[1]), let json = try? JSONValue(parsing: bytes) else { return nil }
        return try? Intent(confirmed: json)
    }

    /// The intent `token` confirms, if it is a token given by this session at its current version.
    /// - Throws: 412 `version_conflict` for a token that is unknown, used or stale (docs/design.md, "Leave confirmation").
    static func intent(of token: String, session: StoredSession) throws(ServiceError) -> Intent {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let version = DecimalDigits.parse(parts[0].utf8, leadingZeros: false),
            equal(Array(mac(parts[0] + "." + parts[1], session).utf8), Array(parts[2].utf8)),
            let intent = claimedIntent(token)
        else { throw conflict("the confirmation token is not one this session gave", session) }
        guard version == session.state.version else {
            throw conflict("the session changed since the confirmation was asked for (it is at version \(session.state.version))", session)
        }
        return intent
    }

    private static func conflict(_ detail: String, _ session: StoredSession) -> ServiceError {
        var error = ServiceError(.versionConflict, detail)
        error.currentVersion = session.state.version
        return error
    }

    private static func mac(_ body: some StringProtocol, _ session: StoredSession) -> String {
        let message = Array("navd confirmation\u{0}".utf8) + session.tokenDigest.bytes + Array(session.id.utf8) + [0] + Array(body.utf8)
        return Hex.string(Array(SHA256.hash(message).prefix(16)))
    }

    /// Equal bytes, compared without stopping at the first difference.
    private static func equal(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

extension Intent {
    /// Whether applying the intent changes the session's context (docs/design.md, "Auth and tokens": with a backend token
    /// configured, only the backend or the admin may).
    var changesContext: Bool {
        switch self {
        case .patchContext: true
        case .batch(let intents): intents.contains { $0.changesContext }
        default: false
        }
    }
}
