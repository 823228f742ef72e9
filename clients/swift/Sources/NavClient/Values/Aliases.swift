// The wire shapes of openapi.yaml under the names a client uses (the generated names are
// `Components.Schemas.…`).
public typealias SessionView = Components.Schemas.SessionView
public typealias MutationResult = Components.Schemas.MutationResult
public typealias CreatedSession = Components.Schemas.CreatedSession
public typealias Screen = Components.Schemas.Screen
public typealias Actions = Components.Schemas.Actions
public typealias LifecycleEvent = Components.Schemas.Event
public typealias EventLog = Components.Schemas.EventLog
public typealias BatchItem = Components.Schemas.BatchItem
public typealias Confirmation = Components.Schemas.Confirmation
public typealias ParamValue = Components.Schemas.ParamValue
public typealias SessionSummary = Components.Schemas.SessionSummary
public typealias GraphSummary = Components.Schemas.GraphSummary
public typealias GraphDetail = Components.Schemas.GraphDetail
public typealias GraphDocument = Components.Schemas.GraphDocument
public typealias GraphUploadResult = Components.Schemas.GraphUploadResult
public typealias UpgradeReport = Components.Schemas.UpgradeReport

/// What a session view, a change's answer and a creation's answer have in common, so a client
/// renders any of them the same way.
public protocol SessionState: Sendable {
    var id: String { get }
    var graph: Components.Schemas.SessionGraph { get }
    var version: Int { get }
    var path: String { get }
    var pending: String? { get }
    var screens: [Screen] { get }
    var actions: Actions { get }
}

extension SessionView: SessionState {}
extension MutationResult: SessionState {}
extension CreatedSession: SessionState {}

extension SessionState {
    /// The top screen (the stage is never empty).
    public var top: Screen? { screens.last }
}

extension BatchItem {
    /// `{"navigate": PATH}`.
    public static func navigate(_ path: String) -> BatchItem { BatchItem(navigate: path) }
    /// `{"link": NAME, "params": {…}}`.
    public static func link(_ name: String, params: [String: JSONValue] = [:]) -> BatchItem {
        BatchItem(link: name, params: params.container)
    }
    /// `{"back": N}`, with the `result` handed to the screen revealed.
    public static func back(_ count: Int = 1, result: JSONValue? = nil) -> BatchItem {
        BatchItem(back: count, result: result?.container)
    }
    /// `{"exit": {"result"?}}`.
    public static func exit(result: JSONValue? = nil) -> BatchItem {
        BatchItem(exit: .init(result: result?.container))
    }
    /// `{"context": PATCH}`.
    public static func context(_ patch: [String: JSONValue]) -> BatchItem { BatchItem(context: patch.container) }
    /// `{"state": {"screen", "patch"}}`.
    public static func state(screen: String, patch: [String: JSONValue]) -> BatchItem {
        BatchItem(state: .init(screen: screen, patch: patch.container))
    }
    /// `{"command": {"screen", "name", "args"?}}`.
    public static func command(_ name: String, screen: String, args: [String: JSONValue]? = nil) -> BatchItem {
        BatchItem(command: .init(screen: screen, name: name, args: args?.container))
    }
}
