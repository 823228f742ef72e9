import NavJSON

/// One receiver of the feed (`--webhook NAME=URL`): where batches go, the secrets they are signed
/// with (several while a secret is rotated: each adds a signature), and the one graph whose
/// records it gets, when `--webhook-graph` names one.
package struct WebhookEndpoint: Sendable, Equatable {
    /// The operator's name for it: its position's key in the store, its label at `/metrics`.
    package var name: String
    package var url: String
    package var secrets: [[UInt8]]
    package var graph: String?

    package init(name: String, url: String, secrets: [[UInt8]], graph: String? = nil) {
        self.name = name
        self.url = url
        self.secrets = secrets
        self.graph = graph
    }

    /// Whether `name` is a valid endpoint name: 1 to 64 of `a-z`, `0-9`, `_` and `-`.
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }

    /// Whether `url` is an `http://` or `https://` URL with a host.
    package static func isValidURL(_ url: String) -> Bool {
        let lowered = url.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            let rest = lowered.dropFirst(scheme.count)
            let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            return !host.isEmpty && !url.contains(where: { $0 == " " || $0.isNewline })
        }
        return false
    }

    /// `NAVD_WEBHOOK_SECRET_<NAME>`: the name upper-cased, every other character than a letter
    /// or a digit as `_`.
    package static func secretVariable(for name: String) -> String {
        "NAVD_WEBHOOK_SECRET_"
            + String(
                name.uppercased().map { character -> Character in
                    character.isASCII && (character.isLetter || character.isNumber) ? character : "_"
                })
    }

    /// A secret's bytes: those a `whsec_<base64>` secret encodes, else the text's UTF-8 bytes.
    /// - Returns: nil for a `whsec_` secret that is not base64, or an empty secret.
    package static func secretBytes(_ text: String) -> [UInt8]? {
        guard text.hasPrefix("whsec_") else { return text.isEmpty ? nil : Array(text.utf8) }
        return WebhookSignature.decodeBase64(text.dropFirst(6)).flatMap { $0.isEmpty ? nil : $0 }
    }
}
