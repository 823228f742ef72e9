import NavHTTP
import NavJSON
import NavSessions

extension RequestContext {
    /// The digest of the request's bearer token, if it sent one (`Authorization: Bearer …`).
    var bearer: TokenDigest? {
        Token.bearerDigest(authorization: request.headers["authorization"])
    }

    /// Who is asking, as the session service checks it.
    var credentials: Credentials {
        Credentials(bearer: bearer)
    }

    /// The body as a JSON object; an empty body is `{}` when `optional`.
    /// - Throws: 415 for a body that is not JSON, 400 `malformed_json` for one that does not parse.
    func jsonObject(optional: Bool = false, mediaTypes: [String] = ["application/json"]) throws(APIError) -> [String: JSONValue] {
        if request.body.isEmpty, optional { return [:] }
        let contentType = request.headers["content-type"].map(Self.mediaType) ?? ""
        guard
            mediaTypes.contains(contentType)
                || (contentType.hasPrefix("application/") && contentType.hasSuffix("+json") && mediaTypes.contains("application/json"))
        else {
            throw APIError(.unsupportedMediaType, "send the body as \(mediaTypes.joined(separator: " or ")), not '\(contentType)'")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: request.body)
        } catch {
            throw APIError(.malformedJSON, "the body is not valid JSON: \(error)")
        }
        guard let object = value.objectValue else {
            throw APIError(.invalidRequest, "the body must be a JSON object, not \(value.typeName)")
        }
        return object
    }

    /// `Application/JSON; charset=utf-8` → `application/json`: the media type, trimmed, lowercased.
    static func mediaType(_ header: String) -> String {
        if header == "application/json" { return header }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for byte in header.utf8 {
            if byte == UInt8(ascii: ";") { break }
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { continue }
            bytes.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Reads typed fields out of a request object, with clear errors: whatever openapi.yaml's
/// request schemas forbid is 400 `invalid_request` with `param` naming the member at fault.
///
/// A member that is present must have its type: `null` is not "left out" (the schemas give
/// no member a `null` type), and an integer is an integer literal (`1`, not `1.0` or `1e0`).
struct Fields {
    let object: [String: JSONValue]

    func string(_ key: String, required: Bool = false) throws(APIError) -> String? {
        guard let value = object[key] else {
            if required { throw APIError(.invalidRequest, "'\(key)' is required", param: key) }
            return nil
        }
        guard let text = value.stringValue else {
            throw APIError(.invalidRequest, "'\(key)' must be a string, not \(value.typeName)", param: key)
        }
        return text
    }

    /// An integer member within `range`.
    func int(_ key: String, range: ClosedRange<Int>) throws(APIError) -> Int? {
        guard let value = object[key] else { return nil }
        guard case .int(let number) = value else {
            throw APIError(
                .invalidRequest, "'\(key)' must be an integer, not \(value.typeName == "number" ? "a fraction" : value.typeName)",
                param: key)
        }
        guard range.contains(number) else {
            throw APIError(.invalidRequest, "'\(key)' must be in \(range.lowerBound)...\(range.upperBound)", param: key)
        }
        return number
    }

    func object(_ key: String) throws(APIError) -> [String: JSONValue]? {
        guard let value = object[key] else { return nil }
        guard let members = value.objectValue else {
            throw APIError(.invalidRequest, "'\(key)' must be an object, not \(value.typeName)", param: key)
        }
        return members
    }

    /// An object of parameter values (openapi.yaml `Params`): each a string, number or boolean.
    func params(_ key: String) throws(APIError) -> [String: JSONValue]? {
        guard let members = try object(key) else { return nil }
        try Self.checkParams(members, prefix: key + ".")
        return members
    }

    /// Refuses a parameter value that is `null`, an array or an object, naming it.
    static func checkParams(_ params: [String: JSONValue], prefix: String = "") throws(APIError) {
        var bad: String?
        for (name, value) in params {
            switch value {
            case .string, .int, .double, .bool: continue
            case .null, .array, .object:
                if bad.map({ name < $0 }) ?? true { bad = name }
            }
        }
        if let bad, let value = params[bad] {
            throw APIError(
                .invalidRequest, "parameter '\(bad)' must be a string, number or boolean, not \(value.typeName)", param: prefix + bad)
        }
    }

    /// Refuses members the operation does not know, so a typo is not silently ignored; of
    /// several unknown members, the error names the first in sorted order.
    func only(_ keys: [String]) throws(APIError) {
        var unknown: String?
        for key in object.keys where !keys.contains(key) {
            if unknown.map({ key < $0 }) ?? true { unknown = key }
        }
        if let unknown { throw APIError(.invalidRequest, "unknown field '\(unknown)'", param: unknown) }
    }
}

extension HTTPRequest {
    /// The value of a header that names one thing (`Last-Event-ID`, `Idempotency-Key`), without
    /// the blanks around it (RFC 9110 §5.5), if it was sent. Sent twice, its values would be
    /// joined into a third (`a, b`) that neither names, and which one a proxy or a log read is
    /// not known: refused, as a repeated query parameter is.
    /// - Parameter name: the field's name as a client writes it; it is looked up lowercased.
    func singleHeader(_ name: String) throws(APIError) -> String? {
        let field = name.lowercased()
        guard let sent = headers[field] else { return nil }
        guard !headers.isRepeated(field) else { throw APIError(.invalidRequest, "\(name) is given more than once", param: name) }
        return sent.trimmingCharacters(in: " \t")
    }
}
