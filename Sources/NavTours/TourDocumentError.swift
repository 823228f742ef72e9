/// A problem in a tours document, with the JSON pointer of the value at fault.
public struct TourDocumentError: Error, Sendable, Hashable, CustomStringConvertible {
    public var pointer: String
    public var message: String

    public init(_ pointer: String, _ message: String) {
        self.pointer = pointer
        self.message = message
    }

    public var description: String { "\(pointer.isEmpty ? "/" : pointer): \(message)" }
}
