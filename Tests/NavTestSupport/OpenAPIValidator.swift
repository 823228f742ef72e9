import Foundation
import Synchronization

/// Holds HTTP answers to `openapi.yaml`: the status must be declared for the operation
/// (or `default`), required response headers must be present (and match their pattern),
/// the media type must be one the response declares, and a JSON body must conform to
/// its schema.
///
/// Implements the JSON Schema subset the spec uses: `$ref`, `type` (also as an array,
/// with `"null"`), `properties`, `required`, `additionalProperties`, `items`, `enum`,
/// `const`, `propertyNames`, `allOf`/`anyOf`/`oneOf`/`not`, `if`/`then`/`else`, `minimum`/`maximum`
/// (and their exclusive forms), `minLength`/`maxLength`, `pattern` (`NSRegularExpression`,
/// unanchored as in JSON Schema), `minItems`/`maxItems`, `minProperties`/`maxProperties`,
/// and boolean schemas. `format` and annotations are ignored. ``unsupportedKeywords()``
/// lists any keyword of the spec outside that subset, so the subset cannot silently fall
/// behind the spec.
final class OpenAPIValidator: Sendable {
    /// The spec as parsed.
    let document: JSON
    /// Compiled `pattern`s; `NSRegularExpression` is immutable and safe to share.
    private let patterns = Mutex<[String: RegexBox]>([:])

    private struct RegexBox: @unchecked Sendable {
        let regex: NSRegularExpression?
    }

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// The keywords ``validate(_:against:at:)`` implements.
    static let assertionKeywords: Set<String> = [
        "$ref", "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "minProperties",
        "maxProperties", "propertyNames", "format"
    ]
    /// Keywords that describe and never constrain.
    static let annotationKeywords: Set<String> = [
        "description", "default", "example", "examples", "title", "deprecated", "readOnly", "writeOnly",
        "summary", "externalDocs", "$comment"
    ]

    init(yaml: String) throws {
        document = try JSON(yaml: yaml)
    }

    /// The repository's `openapi.yaml`, found relative to this file.
    static let specURL = DaemonHarness.packageRoot.appendingPathComponent("openapi.yaml")

    /// The repository's spec, loaded once.
    static let shared: Result<OpenAPIValidator, any Error> = Result {
        try OpenAPIValidator(yaml: String(contentsOf: specURL, encoding: .utf8))
    }

    // MARK: Operations

    struct Operation: Sendable, Hashable {
        /// Upper case, as on the wire.
        var method: String
        var template: String
        var operationID: String
    }

    /// Every operation the spec declares.
    var operations: [Operation] {
        guard let paths = document["paths"]?.object else { return [] }
        return paths.keys.sorted().flatMap { template in
            Self.methods.compactMap { method in
                guard let operation = paths[template]?[method] else { return nil }
                return Operation(method: method.uppercased(), template: template, operationID: operation["operationId"]?.string ?? "")
            }
        }
    }

    /// The path template of `path` (query removed), preferring literal segments.
    func template(for path: String) -> String? {
        let bare = String(path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let parts = bare.split(separator: "/", omittingEmptySubsequences: false)
        guard bare.hasPrefix("/"), let paths = document["paths"]?.object else { return nil }
        var best: (template: String, literals: Int)?
        for template in paths.keys {
            let segments = template.split(separator: "/", omittingEmptySubsequences: false)
            guard segments.count == parts.count else { continue }
            var literals = 0
            var matches = true
            for (segment, part) in zip(segments, parts) {
                if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    if part.isEmpty {
                        matches = false
                        break
                    }
                } else if segment == part {
                    literals += 1
                } else {
                    matches = false
                    break
                }
            }
            if matches, literals > (best?.literals ?? -1) { best = (template, literals) }
        }
        return best?.template
    }

    /// The methods the spec declares for a template, upper case, sorted.
    func methods(of template: String) -> [String] {
        guard let item = document["paths"]?[template] else { return [] }
        return Self.methods.filter { item[$0] != nil }.map { $0.uppercased() }.sorted()
    }

    // MARK: Responses

    /// The answers to a request whose framing is refused, by status: its code and response.
    static let framingRefusals: [Int: (code: String, response: String)] = [
        400: ("malformed_request", "MalformedRequest"),
        501: ("unsupported_transfer_coding", "UnsupportedTransferCoding")
    ]

    /// Checks one answer. - Returns: every violation, empty when it conforms.
    func validate(method: String, path: String, status: Int, headers: [String: String], body: [UInt8]) -> [String] {
        let method = method.uppercased()
        let label = "\(method) \(path.prefix(120)) → \(status)"
        let response: JSON
        var violations: [String] = []
        // The spec's conventions: a refusal of the request's framing may answer any request,
        // routed or not, before routing.
        if let refusal = Self.framingRefusals[status], (try? JSON(parsing: body)["code"]?.string) == refusal.code,
            let declared = document.resolve(pointer: "/components/responses/\(refusal.response)")
        {
            return check(response: declared, label: label, method: method, status: status, headers: headers, body: body)
        }
        guard let template = template(for: path), let item = document["paths"]?[template] else {
            // No route: the daemon answers 404 `not_found` (or 413 before routing).
            guard status == 404 || status == 413,
                let fallback = document.resolve(
                    pointer: status == 404 ? "/components/responses/NotFound" : "/components/responses/ContentTooLarge")
            else {
                return ["\(label): no path of the spec matches, so only 404 not_found (or 413) may answer"]
            }
            violations += check(response: fallback, label: label, method: method, status: status, headers: headers, body: body)
            if status == 404, let code = try? JSON(parsing: body)["code"]?.string, code != "not_found" {
                violations.append("\(label): an unknown route must answer not_found, not \(code)")
            }
            return violations
        }
        // The spec's conventions (info.description): a CORS preflight answers 204 with the allowed
        // methods, and every GET operation answers HEAD (checked as the GET, without a body).
        if method == "OPTIONS", status == 204, headers["access-control-allow-origin"] != nil, body.isEmpty {
            return headers["access-control-allow-methods"] == nil ? ["\(label): a preflight answer names no methods"] : []
        }
        if let operation = item[method.lowercased()] ?? (method == "HEAD" ? item["get"] : nil) {
            guard let declared = operation["responses"]?[String(status)] ?? operation["responses"]?["default"] else {
                let known = operation["responses"]?.object?.keys.sorted().joined(separator: ", ") ?? ""
                return [
                    "\(label): status \(status) is not declared for \(operation["operationId"]?.string ?? template) (declared: \(known))"
                ]
            }
            response = declared
        } else {
            // A known path with another method: 405 with `Allow` naming the spec's methods.
            guard status == 405 || status == 413 else {
                return ["\(label): \(method) is not an operation of \(template); expected 405"]
            }
            let anyOperation = Self.methods.compactMap { item[$0] }.first
            guard let declared = anyOperation?["responses"]?[String(status)] else {
                return ["\(label): no operation of \(template) declares \(status)"]
            }
            response = declared
            if status == 405 {
                let allowed = (headers["allow"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
                    .sorted()
                // The spec's conventions: every GET route answers HEAD too.
                let declared = methods(of: template)
                let expected = (declared + (declared.contains("GET") ? ["HEAD"] : [])).sorted()
                if allowed != expected {
                    violations.append("\(label): Allow is \(allowed) but the spec declares \(declared) (and HEAD with GET) for \(template)")
                }
            }
        }
        violations += check(response: response, label: label, method: method, status: status, headers: headers, body: body)
        return violations
    }

    private func check(response declared: JSON, label: String, method: String, status: Int, headers: [String: String], body: [UInt8])
        -> [String]
    {
        var violations: [String] = []
        guard let response = dereferenced(declared) else { return ["\(label): unresolvable response $ref"] }
        for (name, declaredHeader) in response["headers"]?.object ?? [:] {
            guard let header = dereferenced(declaredHeader) else {
                violations.append("\(label): unresolvable header $ref for \(name)")
                continue
            }
            guard let value = headers[name.lowercased()] else {
                if header["required"]?.bool == true { violations.append("\(label): required header \(name) is missing") }
                continue
            }
            if let schema = header["schema"] {
                violations += validate(.string(value), against: schema, at: "header \(name)").map { "\(label): \($0)" }
            }
        }
        guard let content = response["content"]?.object else {
            if !body.isEmpty, method != "HEAD" {
                violations.append("\(label): the spec declares no content, but \(body.count) bytes came")
            }
            return violations
        }
        guard let contentType = headers["content-type"] else {
            return violations + ["\(label): Content-Type is missing (declared: \(content.keys.sorted()))"]
        }
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let media = content[mediaType] else {
            return violations + ["\(label): Content-Type \(mediaType) is not declared (declared: \(content.keys.sorted()))"]
        }
        guard method != "HEAD" else { return violations }
        if mediaType == "application/json" || mediaType.hasSuffix("+json") {
            do {
                let value = try JSON(parsing: body)
                if let schema = media["schema"] {
                    violations += validate(value, against: schema).map { "\(label): \($0)" }
                }
            } catch {
                violations.append("\(label): \(error)")
            }
        } else if media["schema"]?["type"]?.string == "string", String(validating: body, as: UTF8.self) == nil {
            violations.append("\(label): a \(mediaType) body is not UTF-8 text")
        }
        return violations
    }

    /// Follows `$ref`s of response and header objects.
    private func dereferenced(_ value: JSON) -> JSON? {
        var current = value
        for _ in 0..<16 {
            guard let reference = current["$ref"]?.string else { return current }
            guard reference.hasPrefix("#"), let target = document.resolve(pointer: String(reference.dropFirst())) else { return nil }
            current = target
        }
        return nil
    }

    // MARK: Schemas

    /// The schema `components/schemas/<name>`.
    func schema(named name: String) -> JSON? {
        document["components"]?["schemas"]?[name]
    }

    /// Validates `value` against `schema`. - Returns: every violation, with its JSON pointer.
    func validate(_ value: JSON, against schema: JSON, at pointer: String = "") -> [String] {
        var errors: [String] = []
        check(value, schema, pointer, &errors, depth: 0)
        return errors
    }

    private func conforms(_ value: JSON, _ schema: JSON, depth: Int) -> Bool {
        var errors: [String] = []
        check(value, schema, "", &errors, depth: depth)
        return errors.isEmpty
    }

    private func check(_ value: JSON, _ schema: JSON, _ pointer: String, _ errors: inout [String], depth: Int) {
        let at = pointer.isEmpty ? "(root)" : pointer
        guard depth < 64 else {
            errors.append("\(at): schema nesting too deep (a $ref cycle?)")
            return
        }
        let keywords: [String: JSON]
        switch schema {
        case .bool(true): return
        case .bool(false):
            errors.append("\(at): no value is allowed here")
            return
        case .object(let members): keywords = members
        default:
            errors.append("\(at): the schema is not an object or boolean")
            return
        }

        if let reference = keywords["$ref"]?.string {
            if reference.hasPrefix("#"), let target = document.resolve(pointer: String(reference.dropFirst())) {
                check(value, target, pointer, &errors, depth: depth + 1)
            } else {
                errors.append("\(at): unresolvable $ref \(reference)")
            }
        }

        if let type = keywords["type"] {
            let types = type.string.map { [$0] } ?? type.array?.compactMap(\.string) ?? []
            guard types.contains(where: { Self.value(value, hasType: $0) }) else {
                errors.append("\(at): expected \(types.joined(separator: " or ")), got \(value.typeName) \(value.text.prefix(80))")
                return
            }
        }
        if let allowed = keywords["enum"]?.array, !allowed.contains(where: { $0.schemaEquals(value) }) {
            errors.append("\(at): \(value.text.prefix(80)) is not one of \(allowed.map(\.text).joined(separator: ", "))")
        }
        if let constant = keywords["const"], !constant.schemaEquals(value) {
            errors.append("\(at): expected the constant \(constant.text), got \(value.text.prefix(80))")
        }

        switch value {
        case .object(let members):
            for name in keywords["required"]?.array?.compactMap(\.string) ?? [] where members[name] == nil {
                errors.append("\(at): required member '\(name)' is missing")
            }
            let properties = keywords["properties"]?.object ?? [:]
            for name in members.keys.sorted() {
                guard let member = members[name] else { continue }
                let memberPointer = pointer + "/" + name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
                if let property = properties[name] {
                    check(member, property, memberPointer, &errors, depth: depth + 1)
                } else if let additional = keywords["additionalProperties"] {
                    if additional == .bool(false) {
                        errors.append("\(at): member '\(name)' is not allowed (additionalProperties: false)")
                    } else {
                        check(member, additional, memberPointer, &errors, depth: depth + 1)
                    }
                }
            }
            if let names = keywords["propertyNames"] {
                for name in members.keys.sorted() {
                    check(.string(name), names, pointer + "/" + name, &errors, depth: depth + 1)
                }
            }
            if let minimum = keywords["minProperties"]?.int, members.count < minimum {
                errors.append("\(at): \(members.count) members, fewer than \(minimum)")
            }
            if let maximum = keywords["maxProperties"]?.int, members.count > maximum {
                errors.append("\(at): \(members.count) members, more than \(maximum)")
            }
        case .array(let elements):
            if let items = keywords["items"] {
                for (index, element) in elements.enumerated() {
                    check(element, items, pointer + "/\(index)", &errors, depth: depth + 1)
                }
            }
            if let minimum = keywords["minItems"]?.int, elements.count < minimum {
                errors.append("\(at): \(elements.count) items, fewer than \(minimum)")
            }
            if let maximum = keywords["maxItems"]?.int, elements.count > maximum {
                errors.append("\(at): \(elements.count) items, more than \(maximum)")
            }
        case .string(let text):
            let length = text.unicodeScalars.count
            if let minimum = keywords["minLength"]?.int, length < minimum {
                errors.append("\(at): '\(text.prefix(80))' is shorter than \(minimum)")
            }
            if let maximum = keywords["maxLength"]?.int, length > maximum {
                errors.append("\(at): '\(text.prefix(80))' is longer than \(maximum)")
            }
            if let pattern = keywords["pattern"]?.string {
                if let regex = regex(pattern) {
                    let range = NSRange(text.startIndex..<text.endIndex, in: text)
                    if regex.firstMatch(in: text, options: [], range: range) == nil {
                        errors.append("\(at): '\(text.prefix(80))' does not match \(pattern)")
                    }
                } else {
                    errors.append("\(at): the pattern \(pattern) does not compile")
                }
            }
        case .int, .double:
            let number: Double =
                if case .int(let whole) = value { Double(whole) } else if case .double(let real) = value { real } else { 0 }
            if let minimum = Self.number(keywords["minimum"]), number < minimum {
                errors.append("\(at): \(value.text) is less than \(minimum)")
            }
            if let maximum = Self.number(keywords["maximum"]), number > maximum {
                errors.append("\(at): \(value.text) is more than \(maximum)")
            }
            if let minimum = Self.number(keywords["exclusiveMinimum"]), number <= minimum {
                errors.append("\(at): \(value.text) is not more than \(minimum)")
            }
            if let maximum = Self.number(keywords["exclusiveMaximum"]), number >= maximum {
                errors.append("\(at): \(value.text) is not less than \(maximum)")
            }
        default:
            break
        }

        for sub in keywords["allOf"]?.array ?? [] {
            check(value, sub, pointer, &errors, depth: depth + 1)
        }
        if let options = keywords["anyOf"]?.array, !options.contains(where: { conforms(value, $0, depth: depth + 1) }) {
            errors.append("\(at): matches none of anyOf")
        }
        if let options = keywords["oneOf"]?.array {
            let matching = options.filter { conforms(value, $0, depth: depth + 1) }.count
            if matching != 1 { errors.append("\(at): matches \(matching) of oneOf, not exactly one") }
        }
        if let negated = keywords["not"], conforms(value, negated, depth: depth + 1) {
            errors.append("\(at): matches a schema it must not match (not: \(negated.text.prefix(80)))")
        }
        if let condition = keywords["if"] {
            if conforms(value, condition, depth: depth + 1) {
                if let then = keywords["then"] { check(value, then, pointer, &errors, depth: depth + 1) }
            } else if let otherwise = keywords["else"] {
                check(value, otherwise, pointer, &errors, depth: depth + 1)
            }
        }
    }

    private static func value(_ value: JSON, hasType type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): true
        case ("integer", .int), ("number", .int), ("number", .double): true
        case ("integer", .double(let real)): real.rounded() == real
        default: false
        }
    }

    private static func number(_ value: JSON?) -> Double? {
        switch value {
        case .int(let whole): Double(whole)
        case .double(let real): real
        default: nil
        }
    }

    private func regex(_ pattern: String) -> NSRegularExpression? {
        patterns.withLock { cache in
            if let box = cache[pattern] { return box.regex }
            let compiled = try? NSRegularExpression(pattern: pattern)
            cache[pattern] = RegexBox(regex: compiled)
            return compiled
        }
    }

    // MARK: Coverage of the spec

    /// Every schema keyword used in the spec that this validator neither implements nor
    /// knows as an annotation, with where it is used.
    func unsupportedKeywords() -> [String] {
        var found: [String] = []
        func walkSchema(_ schema: JSON, _ pointer: String) {
            guard case .object(let keywords) = schema else { return }
            for (keyword, value) in keywords {
                let here = pointer + "/" + keyword
                switch keyword {
                case "properties":
                    for (name, sub) in value.object ?? [:] { walkSchema(sub, here + "/" + name) }
                case "additionalProperties", "items", "not", "if", "then", "else", "propertyNames":
                    walkSchema(value, here)
                case "allOf", "anyOf", "oneOf":
                    for (index, sub) in (value.array ?? []).enumerated() { walkSchema(sub, here + "/\(index)") }
                default:
                    if !Self.assertionKeywords.contains(keyword), !Self.annotationKeywords.contains(keyword) {
                        found.append("\(keyword) at \(pointer)")
                    }
                }
            }
        }
        // Every `schema` member anywhere (parameters, headers, media types) and every component schema.
        func walkDocument(_ value: JSON, _ pointer: String) {
            switch value {
            case .object(let members):
                for (key, member) in members {
                    if key == "schema" { walkSchema(member, pointer + "/schema") } else { walkDocument(member, pointer + "/" + key) }
                }
            case .array(let elements):
                for (index, element) in elements.enumerated() { walkDocument(element, pointer + "/\(index)") }
            default:
                break
            }
        }
        for (name, schema) in document["components"]?["schemas"]?.object ?? [:] {
            walkSchema(schema, "/components/schemas/" + name)
        }
        walkDocument(document["paths"] ?? .null, "/paths")
        walkDocument(document["components"]?["parameters"] ?? .null, "/components/parameters")
        walkDocument(document["components"]?["headers"] ?? .null, "/components/headers")
        walkDocument(document["components"]?["responses"] ?? .null, "/components/responses")
        return found.sorted()
    }
}
