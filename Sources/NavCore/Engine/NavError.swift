/// Why an intent was refused. A refused intent changes nothing and emits nothing.
public struct NavError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes; the daemon maps each to an HTTP status (DESIGN §4).
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidPath = "invalid_path"
        case invalidRequest = "invalid_request"
        case unknownScene = "unknown_scene"
        case unknownTransition = "unknown_transition"
        case invalidParams = "invalid_params"
        case transitionRefused = "transition_refused"
        case notRemovable = "not_removable"
        case stackUnderflow = "stack_underflow"
        case stackTooDeep = "stack_too_deep"
        case screenNotFound = "not_found"
    }

    public var code: Code
    public var message: String
    /// For `invalid_path`: where in the path text it broke.
    public var offset: Int?
    /// For `invalid_params`: which parameter.
    public var param: String?

    public init(_ code: Code, _ message: String, offset: Int? = nil, param: String? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
        self.param = param
    }

    init(_ pathError: PathError) {
        self.init(.invalidPath, pathError.reason, offset: pathError.offset)
    }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let offset { text += " (offset \(offset))" }
        if let param { text += " (param \(param))" }
        return text
    }
}
