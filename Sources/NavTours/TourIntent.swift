import NavCore
import NavJSON

/// One step a tour asks of a session, written as a batch item is (docs/design.md, "Batches"): `{"navigate": PATH}`,
/// `{"link": NAME, "params": {…}}`, `{"back": N}`, `{"exit": {}}`.
public enum TourIntent: Sendable, Hashable {
    case navigate(String)
    case link(String, params: [String: JSONValue])
    case back(Int)
    case exit

    /// The intent NavCore applies.
    public var intent: Intent {
        switch self {
        case .navigate(let path): .navigate(path)
        case .link(let name, let params): .link(name: name, params: params)
        case .back(let count): .back(count)
        case .exit: .exit()
        }
    }

    public var json: JSONValue {
        switch self {
        case .navigate(let path): ["navigate": .string(path)]
        case .link(let name, let params): ["link": .string(name), "params": .object(params)]
        case .back(let count): ["back": .int(count)]
        case .exit: ["exit": .object([:])]
        }
    }

    /// Reads the batch-item form.
    /// - Throws: ``TourDocumentError`` naming `pointer` when the value is not one of the four forms.
    public init(json: JSONValue, at pointer: String) throws(TourDocumentError) {
        guard let members = json.objectValue else { throw TourDocumentError(pointer, "an intent must be an object") }
        if let path = members["navigate"] {
            guard members.count == 1, let text = path.stringValue else {
                throw TourDocumentError(pointer, "`navigate` takes a path string and nothing else")
            }
            self = .navigate(text)
        } else if let name = members["link"] {
            guard let text = name.stringValue, members.keys.allSatisfy({ $0 == "link" || $0 == "params" }) else {
                throw TourDocumentError(pointer, "`link` takes a name string and optional `params`")
            }
            guard let params = (members["params"] ?? .object([:])).objectValue else {
                throw TourDocumentError(pointer + "/params", "`params` must be an object")
            }
            self = .link(text, params: params)
        } else if let count = members["back"] {
            guard members.count == 1, let number = count.intValue, number >= 1 else {
                throw TourDocumentError(pointer, "`back` takes a count of at least 1")
            }
            self = .back(number)
        } else if members["exit"] != nil, members.count == 1 {
            self = .exit
        } else {
            throw TourDocumentError(pointer, "an intent is one of {navigate}, {link, params}, {back}, {exit}")
        }
    }
}

extension TourIntent: CustomStringConvertible {
    /// `navigate ^/top/home#friend`, `link show(id=1)`, `back 1`, `exit`.
    public var description: String {
        switch self {
        case .navigate(let path):
            return "navigate \(path)"
        case .link(let name, let params):
            let arguments = params.keys.sorted().map { key in
                "\(key)=\(params[key].flatMap(ParamValue.text(of:)) ?? "?")"
            }
            return arguments.isEmpty ? "link \(name)" : "link \(name)(\(arguments.joined(separator: ",")))"
        case .back(let count):
            return "back \(count)"
        case .exit:
            return "exit"
        }
    }
}
