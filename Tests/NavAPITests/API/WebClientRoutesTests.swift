import Foundation
import NavDiagram
import NavSessions
import Testing

@testable import NavAPI
@testable import NavTestSupport

/// `/ui/`: the reference web client's files, compiled in, served with their media types,
/// revalidation and security headers (docs/design.md, "The web client"). Every answer is also held to openapi.yaml.
@Suite struct WebClientRoutesTests {
    static let folder = DaemonHarness.packageRoot.appendingPathComponent("Sources/NavAPI/Resources/ui")

    /// Every file in the folder is served, byte for byte, and nothing else is listed: a file
    /// added without its Package.swift resource and route entry shows here.
    @Test func everyFileOfTheFolderIsServedAsItIsOnDisk() throws {
        let navd = try startNavd()
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(names == WebClientRoutes.files.keys.sorted(), "Sources/NavAPI/Resources/ui and WebClientRoutes.files differ")
        for name in names {
            let answer = try navd.request("GET", "/ui/\(name)")
            #expect(answer.status == 200, "\(name): \(answer)")
            let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
            #expect(answer.body == bytes, "/ui/\(name) differs from the file on disk: rebuild navd, which compiles it in")
        }
        // And openapi.yaml names the same files, the `file` of `/ui/{file}`.
        let spec = try String(contentsOf: OpenAPIValidator.specURL, encoding: .utf8)
        let listed = spec.split(separator: "\n").first { $0.contains("enum: [index.html") }
        let files = listed.map { line in
            line.split(separator: "[").last?.split(separator: "]").first?.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            } ?? []
        }
        #expect(files?.sorted() == names, "openapi.yaml's /ui/{file} enum and Sources/NavAPI/Resources/ui differ")
    }

    @Test(arguments: [
        ("/ui/", "text/html; charset=utf-8"),
        ("/ui/index.html", "text/html; charset=utf-8"),
        ("/ui/app.js", "text/javascript; charset=utf-8"),
        ("/ui/stage.js", "text/javascript; charset=utf-8"),
        ("/ui/style.css", "text/css; charset=utf-8"),
        ("/ui/favicon.svg", "image/svg+xml; charset=utf-8")
    ])
    func filesCarryTheirMediaTypeAndSecurityHeaders(target: String, contentType: String) throws {
        let navd = try startNavd()
        let answer = try navd.request("GET", target)
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == contentType)
        #expect(answer.headers["cache-control"] == "no-cache")
        #expect(answer.headers["x-content-type-options"] == "nosniff")
        #expect(answer.headers["referrer-policy"] == "no-referrer")
        let policy = answer.headers["content-security-policy"] ?? ""
        let directives = Set(policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(directives.contains("default-src 'none'"), "\(policy)")
        #expect(directives.contains("script-src 'self'"), "no inline script, no eval: \(policy)")
        #expect(directives.contains("connect-src 'self'"), "\(policy)")
        #expect(!policy.contains("unsafe-eval"))
        #expect(!policy.contains("unsafe-inline"), "inline style is allowed by hash only: \(policy)")
        // The one inline stylesheet the page may take: the diagram's, by its hash.
        let hash = "sha256-" + Data(SHA256.hash(Array(DiagramStyle.svgStyleElementText.utf8))).base64EncodedString()
        #expect(directives.contains("style-src 'self' '\(hash)'"), "\(policy)")
    }

    @Test(arguments: ["", "f", "fo", "foo", "foob", "fooba", "foobar", "\u{0}\u{FF}\u{10FFFF}"])
    func base64IsRFC4648s(text: String) {
        #expect(WebClientRoutes.base64(Array(text.utf8)) == Data(text.utf8).base64EncodedString())
    }

    @Test func slashlessAddressRedirectsToTheClient() throws {
        let navd = try startNavd()
        let answer = try navd.request("GET", "/ui")
        #expect(answer.status == 308)
        #expect(answer.headers["location"] == "/ui/")
        #expect(answer.body.isEmpty)
    }

    @Test func indexIsTheSameDocumentAtBothAddresses() throws {
        let navd = try startNavd()
        let root = try navd.request("GET", "/ui/")
        let named = try navd.request("GET", "/ui/index.html")
        #expect(root.body == named.body)
        #expect(root.headers["etag"] == named.headers["etag"])
        #expect(root.text.contains(#"<script type="module" src="app.js"></script>"#))
    }

    /// The page may not run inline script: every script is a file of its own.
    @Test func theDocumentHasNoInlineScriptOrHandler() throws {
        let navd = try startNavd()
        let page = try navd.request("GET", "/ui/").text
        var rest = page[...]
        while let open = rest.range(of: "<script") {
            let tagEnd = rest[open.upperBound...].firstIndex(of: ">") ?? rest.endIndex
            #expect(rest[open.upperBound..<tagEnd].contains("src="), "an inline <script> in index.html")
            rest = rest[tagEnd...]
        }
        #expect(page.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "an inline event handler in index.html")
    }

    @Test func aCopyTheBrowserHoldsIsRevalidatedWith304() throws {
        let navd = try startNavd()
        let first = try navd.request("GET", "/ui/app.js")
        let tag = try #require(first.headers["etag"])
        #expect(tag.range(of: #"^"[0-9a-f]{16}"$"#, options: .regularExpression) != nil, "\(tag)")
        for sent in [tag, "W/\(tag)", "\"0000000000000000\", \(tag)", "*"] {
            let again = try navd.request("GET", "/ui/app.js", headers: ["If-None-Match": sent])
            #expect(again.status == 304, "If-None-Match: \(sent)")
            #expect(again.body.isEmpty)
            #expect(again.headers["etag"] == tag)
        }
        let other = try navd.request("GET", "/ui/app.js", headers: ["If-None-Match": "\"0000000000000000\""])
        #expect(other.status == 200)
        #expect(try navd.request("GET", "/ui/style.css").headers["etag"] != tag, "each file has its own tag")
    }

    @Test(arguments: ["/ui/nope.js", "/ui/..", "/ui/%2e%2e%2fopenapi.yaml", "/ui/index.html/x", "/ui/App.js"])
    func unknownFilesAre404LikeAnyUnknownRoute(target: String) throws {
        let navd = try startNavd()
        let answer = try navd.request("GET", target)
        #expect(answer.status == 404, "\(target): \(answer)")
        #expect(answer.code == "not_found")
        #expect(answer.headers["content-type"] == "application/problem+json")
    }

    @Test func otherMethodsAre405() throws {
        let navd = try startNavd()
        for target in ["/ui", "/ui/", "/ui/app.js"] {
            let answer = try navd.request("POST", target)
            #expect(answer.status == 405, "\(target): \(answer)")
            #expect(answer.headers["allow"] == "GET, HEAD")
        }
    }

    @Test func ifNoneMatchListsAreComparedWeakly() {
        let tag = "\"0123456789abcdef\""
        #expect(WebClientRoutes.matches(tag, tag))
        #expect(WebClientRoutes.matches(" W/\(tag) ", tag))
        #expect(WebClientRoutes.matches("\"x\",\(tag)", tag))
        #expect(WebClientRoutes.matches("*", tag))
        #expect(!WebClientRoutes.matches("\"x\"", tag))
        #expect(!WebClientRoutes.matches("", tag))
        #expect(!WebClientRoutes.matches("0123456789abcdef", tag))
    }
}
