import ArgumentParser
import NavWebhooks

/// `--webhook NAME=URL` and its companions, read into endpoints: each with at least one secret
/// (from `--webhook-secret`, `NAVD_WEBHOOK_SECRET_<NAME>` or `--webhook-secret-file`, all of them
/// kept: several sign side by side while one is rotated), and the graph `--webhook-graph` names.
enum WebhookSettings {
    struct Options {
        var webhooks: [String]
        var secrets: [String]
        var secretFiles: [String]
        var graphs: [String]
    }

    static func endpoints(_ options: Options, environment: [String: String], feedIsOn: Bool) throws -> [WebhookEndpoint] {
        var endpoints: [WebhookEndpoint] = []
        for text in options.webhooks {
            let (name, url) = try pair(text, "--webhook", "NAME=URL")
            guard WebhookEndpoint.isValidURL(url) else {
                throw ValidationError("--webhook \(name): the URL must be http:// or https:// with a host, not '\(url)'")
            }
            guard !endpoints.contains(where: { $0.name == name }) else {
                throw ValidationError("--webhook \(name) is given twice: one URL an endpoint")
            }
            endpoints.append(WebhookEndpoint(name: name, url: url, secrets: []))
        }
        func index(of name: String, _ flag: String) throws -> Int {
            guard let index = endpoints.firstIndex(where: { $0.name == name }) else {
                throw ValidationError("\(flag) \(name): no --webhook is named \(name)")
            }
            return index
        }
        func add(_ secret: String, to name: String, _ source: String) throws {
            let at = try index(of: name, source)
            guard let bytes = WebhookEndpoint.secretBytes(secret) else {
                throw ValidationError("\(source) \(name): the secret is empty, or whsec_ followed by something other than base64")
            }
            endpoints[at].secrets.append(bytes)
        }
        for text in options.secrets {
            let (name, secret) = try pair(text, "--webhook-secret", "NAME=SECRET")
            try add(secret, to: name, "--webhook-secret")
        }
        for text in options.secretFiles {
            let (name, file) = try pair(text, "--webhook-secret-file", "NAME=FILE")
            let bytes: [UInt8]
            do {
                bytes = try SystemErrorText.contents(of: file)
            } catch {
                throw ValidationError("--webhook-secret-file \(name): cannot read \(file): \(error.reason)")
            }
            var secret = String(decoding: bytes, as: UTF8.self)
            if secret.hasSuffix("\r\n") { secret.removeLast(1) }
            if secret.hasSuffix("\n") { secret.removeLast() }
            try add(secret, to: name, "--webhook-secret-file")
        }
        for (at, endpoint) in endpoints.enumerated() {
            let variable = WebhookEndpoint.secretVariable(for: endpoint.name)
            if let secret = environment[variable], !secret.isEmpty {
                guard let bytes = WebhookEndpoint.secretBytes(secret) else {
                    throw ValidationError("\(variable): whsec_ must be followed by base64")
                }
                endpoints[at].secrets.append(bytes)
            }
        }
        for text in options.graphs {
            let (name, graph) = try pair(text, "--webhook-graph", "NAME=GRAPH")
            let at = try index(of: name, "--webhook-graph")
            guard endpoints[at].graph == nil else { throw ValidationError("--webhook-graph \(name) is given twice: one graph an endpoint") }
            endpoints[at].graph = graph
        }
        for endpoint in endpoints where endpoint.secrets.isEmpty {
            throw ValidationError(
                "--webhook \(endpoint.name) has no secret: give --webhook-secret \(endpoint.name)=SECRET, --webhook-secret-file \(endpoint.name)=FILE or \(WebhookEndpoint.secretVariable(for: endpoint.name))"
            )
        }
        if !endpoints.isEmpty, !feedIsOn {
            throw ValidationError("--webhook delivers the feed, which --feed-retention 0 turns off")
        }
        return endpoints
    }

    /// `NAME=VALUE`, the name checked.
    private static func pair(_ text: String, _ flag: String, _ form: String) throws -> (name: String, value: String) {
        guard let equals = text.firstIndex(of: "=") else { throw ValidationError("\(flag) must be \(form), not '\(text)'") }
        let name = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        guard WebhookEndpoint.isValidName(name) else {
            throw ValidationError("\(flag): the endpoint name must be 1 to 64 of a-z, 0-9, _ and -, not '\(name)'")
        }
        guard !value.isEmpty else { throw ValidationError("\(flag) \(name): \(form) needs a value after '='") }
        return (name, value)
    }
}
