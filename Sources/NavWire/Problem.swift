import NavCore
import NavJSON

/// An RFC 9457 problem document, as every refusal is answered (docs/design.md, "Errors and codes"):
/// `{type, title, status, detail, code, offset?, param?, issues?}` and the members some refusals
/// add (`pointer`, `index`, `confirmation`, `reasons`: docs/design.md, "Flows").
package struct Problem: Sendable {
    /// The stable error code, also the last part of `type` (`urn:navd:problem:<code>`).
    package var code: String
    package var title: String
    package var status: Int
    package var detail: String
    package var offset: Int?
    package var param: String?
    package var issues: [GraphIssue]?
    /// RFC 9457 extension members of this refusal.
    package var members: [String: JSONValue]

    package init(
        code: String, title: String, status: Int, detail: String, offset: Int? = nil, param: String? = nil, issues: [GraphIssue]? = nil,
        members: [String: JSONValue] = [:]
    ) {
        self.code = code
        self.title = title
        self.status = status
        self.detail = detail
        self.offset = offset
        self.param = param
        self.issues = issues
        self.members = members
    }

    package var json: JSONValue {
        var members = self.members
        members.merge([
            "type": .string("urn:navd:problem:\(code)"),
            "title": .string(title),
            "status": .int(status),
            "detail": .string(detail),
            "code": .string(code)
        ]) { $1 }
        if let offset { members["offset"] = .int(offset) }
        if let param { members["param"] = .string(param) }
        if let issues { members["issues"] = .array(issues.map(\.json)) }
        return .object(members)
    }
}

extension NavError.Reason {
    /// `{pointer, message}`: why a stage does not fit another graph version.
    package var json: JSONValue {
        ["pointer": .string(pointer), "message": .string(message)]
    }
}

extension GraphIssue {
    /// `{pointer, code, message, severity}`: an issue of a graph document, in a problem or a warning list.
    package var json: JSONValue {
        [
            "pointer": .string(pointer),
            "code": .string(code.name),
            "message": .string(message),
            "severity": .string(severity.rawValue)
        ]
    }
}
