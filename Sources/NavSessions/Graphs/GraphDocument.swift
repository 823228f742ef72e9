import NavCore
import NavJSON
import NavYAML

/// Reads graph documents from JSON or YAML text into NavCore's `JSONValue`.
package enum GraphDocument {
    package struct ReadError: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }

        package init(message: String) {
            self.message = message
        }
    }

    /// A document read by its file name: `.yaml`/`.yml` as YAML, anything else as JSON.
    package static func read(bytes: some Collection<UInt8>, fileName: String) throws(ReadError) -> JSONValue {
        if fileName.hasSuffix(".yaml") || fileName.hasSuffix(".yml") { return try yaml(bytes: bytes) }
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw ReadError(message: "\(fileName): not valid JSON: \(error)")
        }
    }

    /// A YAML document (YAML 1.2, core schema), read in time and memory bounded by its length:
    /// aliases, duplicate keys and deep nesting are refused (`YAMLReader`).
    package static func yaml(_ text: String) throws(ReadError) -> JSONValue {
        try yaml(bytes: Array(text.utf8))
    }

    /// A YAML document given as bytes: text that is not UTF-8 is refused with its position,
    /// not read with replacement characters.
    package static func yaml(bytes: some Collection<UInt8>) throws(ReadError) -> JSONValue {
        do {
            return try YAMLReader.read(bytes)
        } catch {
            throw ReadError(message: error.description)
        }
    }
}
