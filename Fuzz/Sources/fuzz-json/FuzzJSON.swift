import FuzzSupport
import NavCore
import NavJSON

/// The JSON codec: any bytes either parse or are refused with a `JSONParseError` inside the
/// input; what parses writes back as JSON that parses to the same value and writes the same bytes
/// again (sorted keys, exact integers), and merge-patching it with itself is itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { bytes in
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONValue(parsing: bytes)
        } catch {
            require(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside \(bytes.count) bytes")
            return
        }
        let written = value.jsonBytes
        guard let again = try? JSONValue(parsing: written) else {
            violated(
                "\(String(decoding: bytes, as: UTF8.self).debugDescription) writes as \(String(decoding: written, as: UTF8.self).debugDescription), which does not parse"
            )
        }
        require(again == value, "\(String(decoding: written, as: UTF8.self).debugDescription) parses to another value")
        require(again.jsonBytes == written, "writing \(String(decoding: written, as: UTF8.self).debugDescription) is not canonical")
        // A merge patch of an object with itself changes nothing (RFC 7396: nulls are removed first).
        if case .object = value, !containsNull(value) {
            require(
                value.mergePatched(with: value) == value,
                "merge-patching \(String(decoding: written, as: UTF8.self)) with itself changes it")
        }
    }
    return 0
}

private func containsNull(_ value: JSONValue) -> Bool {
    switch value {
    case .null: true
    case .array(let elements): elements.contains(where: containsNull)
    case .object(let members): members.values.contains(where: containsNull)
    default: false
    }
}
