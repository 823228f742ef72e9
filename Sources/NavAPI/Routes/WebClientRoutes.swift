import NavDiagram
import NavHTTP
import NavJSON
import NavSessions

/// `/ui/`: the reference web client (docs/design.md, "The web client"), static files compiled into the binary.
///
/// `GET /ui` redirects to `/ui/` (so the page's relative `app.js` and `style.css` resolve under
/// `/ui/`), `GET /ui/` is `index.html`, and `GET /ui/{file}` any of ``files``; another name is the
/// 404 `not_found` of an unknown route. Every file is answered with `Cache-Control: no-cache` and
/// an entity tag (a browser revalidates and gets 304 while the binary is the same), and with the
/// security headers of ``securityHeaders``.
struct WebClientRoutes: Sendable {
    /// One file of the client: its bytes, media type and entity tag.
    struct File: Sendable {
        let bytes: [UInt8]
        let contentType: String
        /// `"<16 hex digits of the bytes' SHA-256>"`: changes whenever the binary's copy does.
        let etag: String

        init(_ bytes: [UInt8], _ contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
            etag = "\"" + Hex.string(Array(SHA256.hash(bytes).prefix(8))) + "\""
        }
    }

    /// The client's files by name (`Sources/NavAPI/Resources/ui/`, embedded whole by Package.swift).
    /// `navd-client.js` there is a link to `clients/js/navd-client.js`, the JavaScript client: one
    /// file, served to pages and used by this client's own modules.
    static let files: [String: File] = [
        "index.html": File(PackageResources.index_html, "text/html; charset=utf-8"),
        "style.css": File(PackageResources.style_css, "text/css; charset=utf-8"),
        "favicon.svg": File(PackageResources.favicon_svg, "image/svg+xml; charset=utf-8"),
        "app.js": File(PackageResources.app_js, "text/javascript; charset=utf-8"),
        "navd-client.js": File(PackageResources.navd_client_js, "text/javascript; charset=utf-8"),
        "dom.js": File(PackageResources.dom_js, "text/javascript; charset=utf-8"),
        "stage.js": File(PackageResources.stage_js, "text/javascript; charset=utf-8"),
        "timeline.js": File(PackageResources.timeline_js, "text/javascript; charset=utf-8"),
        "history.js": File(PackageResources.history_js, "text/javascript; charset=utf-8"),
        "diagram.js": File(PackageResources.diagram_js, "text/javascript; charset=utf-8")
    ]

    /// Sent with every file.
    ///
    /// - The policy allows scripts only from navd itself (no inline script, no `eval`), and
    ///   connections only to navd (the API and its event stream).
    /// - Styles come from navd's files, plus one inline stylesheet allowed by its hash: the graph
    ///   diagram's (`GET /v1/graphs/{name}/diagram?format=svg`), which the client inserts inline
    ///   to mark the current scene and which carries its own `<style>` — the same drawing an
    ///   exported file shows. Any other inline style (an element or a `style` attribute) is refused.
    /// - `Referrer-Policy: no-referrer`: nothing of a page's address leaves with its requests.
    static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self' '\(diagramStyleHash)'; img-src 'self' data:; "
                + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY")
    ]

    /// `sha256-<base64>` of the diagram's `<style>` text (CSP Level 2 hash source).
    static let diagramStyleHash = "sha256-" + base64(SHA256.hash(Array(DiagramStyle.svgStyleElementText.utf8)))

    /// Base64 (RFC 4648 §4, padded) of `bytes`.
    static func base64(_ bytes: [UInt8]) -> String {
        Base64.encodeStandard(bytes)
    }

    func register(in router: inout Routes) {
        router.on("GET", "/ui") { _ in
            HTTPResponse(status: 308, headers: [("Location", "/ui/"), ("Cache-Control", "no-cache")], body: [])
        }
        router.on("GET", "/ui/") { context in Self.answer("index.html", context) }
        router.on("GET", "/ui/{file}") { context in Self.answer(context.parameter("file"), context) }
    }

    /// The file `name`, 304 when the request's `If-None-Match` names its tag, else the 404 of an
    /// unknown route.
    static func answer(_ name: String, _ context: RequestContext) -> HTTPResponse {
        guard let file = files[name] else {
            return APIError(.notFound, "no route \(context.request.method) \(context.request.path.prefix(200))").response
        }
        var headers: [(String, String)] = [("ETag", file.etag), ("Cache-Control", "no-cache")]
        if let tags = context.request.headers["if-none-match"], Self.matches(tags, file.etag) {
            return HTTPResponse(status: 304, headers: headers, body: [])
        }
        headers.append(("Content-Type", file.contentType))
        headers.append(contentsOf: securityHeaders)
        return HTTPResponse(status: 200, headers: headers, body: file.bytes)
    }

    /// Whether an `If-None-Match` value (`*` or a list of tags, weak ones allowed: RFC 9110
    /// §13.1.2 compares weakly) names `etag`.
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { part in
            var tag = String(part).trimmingCharacters(in: " \t")
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == "*" || tag == etag
        }
    }
}
