import NavCore
import NavJSON
import Testing

@testable import NavAPI
@testable import NavHTTP
@testable import NavTestSupport

/// Request bodies: unknown members are refused by name, media types are read leniently.
@Suite struct FieldsTests {
    @Test func knownMembersPass() throws {
        try Fields(object: ["path": .string("/top"), "params": .object([:])]).only(["path", "params"])
        try Fields(object: [:]).only([])
    }

    /// Of several unknown members the error names the first in sorted order, whatever order the
    /// object keeps its keys in.
    @Test func theFirstUnknownMemberIsNamed() {
        let object: [String: JSONValue] = ["zeta": .null, "path": .string("/top"), "beta": .int(1), "alpha2": .bool(true)]
        do {
            try Fields(object: object).only(["path"])
            Issue.record("unknown members were accepted")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.detail == "unknown field 'alpha2'")
        }
    }

    @Test(arguments: [
        ("application/json", "application/json"),
        ("Application/JSON; charset=utf-8", "application/json"),
        (" application/merge-patch+json ;x=y", "application/merge-patch+json"),
        ("text/plain", "text/plain"),
        ("", "")
    ])
    func mediaTypesAreTrimmedAndLowercased(header: String, mediaType: String) {
        #expect(RequestContext.mediaType(header) == mediaType)
    }
}
