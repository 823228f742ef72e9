/// Why an intent was refused. A refused intent changes nothing and emits nothing.
public struct NavError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable codes, each spelled as its name in snake_case (``StableCode``); the daemon maps each
    /// to an HTTP status (docs/design.md, "Errors and codes").
    public enum Code: StableCode {
        case invalidPath
        case invalidRequest
        case unknownScene
        case unknownTransition
        case invalidParams
        case transitionRefused
        case notRemovable
        case stackUnderflow
        case stackTooDeep
        case notFound
        case unknownCommand
        case commandRefused
        case confirmationRequired
        case upgradeRefused
    }

    /// Why a stage does not fit another version of its graph: one reason, located by a JSON
    /// pointer into the stage (`/screens/1/params/id`).
    public struct Reason: Sendable, Hashable {
        public var pointer: String
        public var message: String

        public init(pointer: String, message: String) {
            self.pointer = pointer
            self.message = message
        }
    }

    public var code: Code
    public var message: String
    /// For `invalid_path`: where in the path text it broke.
    public var offset: Int?
    /// For `invalid_params`: which parameter.
    public var param: String?
    /// For `command_refused`: the guard that did not hold, a JSON pointer into the screen's state.
    public var pointer: String?
    /// For `confirmation_required`: the id of the screen that asks before it is left.
    public var screen: String?
    /// For a refusal inside a batch: the position of the item refused, from 0.
    public var index: Int?
    /// For `upgrade_refused`: every reason, each pointing into the stage.
    public var reasons: [Reason]?

    public init(
        _ code: Code, _ message: String, offset: Int? = nil, param: String? = nil, pointer: String? = nil, screen: String? = nil
    ) {
        self.code = code
        self.message = message
        self.offset = offset
        self.param = param
        self.pointer = pointer
        self.screen = screen
    }

    init(_ pathError: PathError) {
        self.init(.invalidPath, pathError.reason, offset: pathError.offset)
    }

    public var description: String {
        var text = "\(code.name): \(message)"
        if let offset { text += " (offset \(offset))" }
        if let param { text += " (param \(param))" }
        if let pointer { text += " (pointer \(pointer))" }
        if let index { text += " (item \(index))" }
        return text
    }
}
