import NavCore
import NavJSON
import NavWire

/// One step a tour asks of a session, written as a batch item is (docs/design.md, "Batches"):
/// `{"navigate": PATH}`, `{"link": NAME, "params"?: {…}}`, `{"back": N, "result"?: V}`,
/// `{"exit": {"result"?: V}}`, `{"params": …}`, `{"state": …}`, `{"command": …}`, `{"context": PATCH}`
/// or a whole batch `{"intents": [item…]}`; and two forms of their own (docs/design.md, "Tours"):
/// `{"confirm": ITEM-or-BATCH}`, a change that asks for a leave confirmation and is then
/// confirmed, and `{"upgrade": {"version"?: N}}`, a move to another version of the graph.
public enum TourIntent: Sendable, Hashable {
    /// A batch item, or a batch (`Intent.batch`), sent to its own route.
    case apply(Intent)
    /// An intent the daemon must answer 409 `confirmation_required`, then confirmed with the token.
    case confirm(Intent)
    /// A move to graph version `version`, or to the latest when `nil`.
    case upgrade(version: Int?)

    public static func navigate(_ path: String) -> TourIntent { .apply(.navigate(path)) }
    public static func link(_ name: String, params: [String: JSONValue]) -> TourIntent { .apply(.link(name: name, params: params)) }
    public static func back(_ count: Int) -> TourIntent { .apply(.back(count)) }
    public static var exit: TourIntent { .apply(.exit()) }

    /// The intent NavCore applies; `nil` for an upgrade, which is no intent.
    public var intent: Intent? {
        switch self {
        case .apply(let intent), .confirm(let intent): intent
        case .upgrade: nil
        }
    }

    public var json: JSONValue {
        switch self {
        case .apply(let intent): intent.wireJSON
        case .confirm(let intent): ["confirm": intent.wireJSON]
        case .upgrade(let version): ["upgrade": .object(version.map { ["version": .int($0)] } ?? [:])]
        }
    }

    /// Reads any of the forms.
    /// - Throws: ``TourDocumentError`` naming `pointer` (or the member inside it at fault) when the
    ///   value is none of them.
    public init(json: JSONValue, at pointer: String) throws(TourDocumentError) {
        guard let members = json.objectValue else { throw TourDocumentError(pointer, "an intent must be an object") }
        if let confirmed = members["confirm"] {
            guard members.count == 1 else { throw TourDocumentError(pointer, "`confirm` takes an intent and nothing else") }
            self = .confirm(try Self.intent(confirmed, at: pointer + "/confirm"))
        } else if let upgrade = members["upgrade"] {
            guard members.count == 1, let body = upgrade.objectValue, body.keys.allSatisfy({ $0 == "version" }) else {
                throw TourDocumentError(pointer, "`upgrade` takes {\"version\"?} and nothing else")
            }
            if let version = body["version"] {
                guard let number = version.intValue, number >= 1 else {
                    throw TourDocumentError(pointer + "/upgrade/version", "a graph version is a number of at least 1")
                }
                self = .upgrade(version: number)
            } else {
                self = .upgrade(version: nil)
            }
        } else {
            self = .apply(try Self.intent(json, at: pointer))
        }
    }

    /// A batch item or a batch, as NavWire reads them for the daemon.
    private static func intent(_ json: JSONValue, at pointer: String) throws(TourDocumentError) -> Intent {
        do {
            return try Intent(confirmed: json)
        } catch {
            // NavWire names the member at fault as a dotted `param` (`intents.0.back`).
            let param = error.param ?? ""
            let inner = param.isEmpty ? "" : param.split(separator: ".", omittingEmptySubsequences: false).map { "/" + $0 }.joined()
            throw TourDocumentError(pointer + inner, error.message)
        }
    }
}

extension TourIntent: CustomStringConvertible {
    /// `navigate ^/top/home#friend`, `link show(id=1)`, `back 1`, `exit`; any other form as its
    /// compact JSON; `confirm` then the intent confirmed; `upgrade`, `upgrade to version 2`.
    public var description: String {
        switch self {
        case .apply(.navigate(let path)):
            return "navigate \(path)"
        case .apply(.link(let name, let params)) where params.values.allSatisfy({ ParamValue.text(of: $0) != nil }):
            let arguments = params.keys.sorted().map { key in "\(key)=\(params[key].flatMap(ParamValue.text(of:)) ?? "?")" }
            return arguments.isEmpty ? "link \(name)" : "link \(name)(\(arguments.joined(separator: ",")))"
        case .apply(.back(let count, nil)):
            return "back \(count)"
        case .apply(.exit(nil)):
            return "exit"
        case .apply(let intent):
            return intent.wireJSON.jsonString
        case .confirm(let intent):
            return "confirm " + TourIntent.apply(intent).description
        case .upgrade(let version):
            return version.map { "upgrade to version \($0)" } ?? "upgrade"
        }
    }
}
