import NavHTTP

/// Cross-origin requests from browsers (`--cors-origin`, docs/design.md, "Browsers and CORS"): which origins may
/// call the API from a page of their own, and the headers that tell a browser so.
///
/// Requests carry their token in `Authorization`, never in cookies, so no credentials mode is
/// needed and `*` is a sensible choice for a public API.
package struct CORSPolicy: Sendable {
    /// Exact origins (`https://app.example.com`), as browsers send them in `Origin`.
    let origins: Set<String>
    /// `*` was given: every origin may.
    let allowsAny: Bool

    init(origins: [String]) {
        self.allowsAny = origins.contains("*")
        self.origins = Set(origins.filter { $0 != "*" })
    }

    var isEnabled: Bool { allowsAny || !origins.isEmpty }

    /// The response headers a browser needs to let a page from `origin` read the answer (none
    /// when the request is not cross-origin or its origin is not allowed), and, whenever CORS is
    /// enabled, `Vary: Origin`: with it on, every answer's headers depend on `Origin` (sent or
    /// not, allowed or not), and a cache in front of navd that keys answers on the URL alone
    /// would otherwise hand one origin's answer to another (docs/design.md, "HTTP framing").
    func headers(for origin: String?) -> [(String, String)] {
        guard isEnabled else { return [] }
        guard let allowed = allowedOrigin(origin) else { return Self.varyOnly }
        return [
            ("Access-Control-Allow-Origin", allowed), ("Vary", "Origin"),
            ("Access-Control-Expose-Headers", Self.exposed)
        ]
    }

    /// What an answer to a request with no allowed origin carries when CORS is on.
    private static let varyOnly = [("Vary", "Origin")]

    /// The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`) for a path whose
    /// routes take `methods`; nil when the origin is not allowed (the request is then routed as any).
    func preflight(origin: String?, methods: [String]) -> HTTPResponse? {
        guard let allowed = allowedOrigin(origin) else { return nil }
        return HTTPResponse(
            status: 204,
            headers: [
                ("Access-Control-Allow-Origin", allowed), ("Vary", "Origin"),
                ("Access-Control-Allow-Methods", (methods + ["OPTIONS"]).joined(separator: ", ")),
                ("Access-Control-Allow-Headers", Self.allowedHeaders),
                ("Access-Control-Max-Age", "600")
            ])
    }

    private func allowedOrigin(_ origin: String?) -> String? {
        guard let origin, isEnabled else { return nil }
        if allowsAny { return "*" }
        return origins.contains(origin) ? origin : nil
    }

    /// Response headers a page may read besides the safelisted ones.
    static let exposed = "ETag, X-Request-Id, Location, Retry-After, Idempotent-Replayed, WWW-Authenticate"
    /// Request headers a page may send.
    static let allowedHeaders = "Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID, X-Request-Id"

    /// Whether `text` is `*` or an origin as browsers write it: `scheme://host[:port]`, nothing after.
    package static func isValidOrigin(_ text: String) -> Bool {
        if text == "*" { return true }
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return false }
        let scheme = text[..<colon]
        let rest = text[colon...].dropFirst(3)
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return false }
        return !rest.isEmpty && rest.allSatisfy { $0.isLetter || $0.isNumber || "-.:[]".contains($0) }
    }
}
