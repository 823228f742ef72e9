import Foundation
import Testing

@testable import NavClient

/// A problem's `code` is open: a daemon newer than this client may answer codes the client has
/// never heard of, and the client must still throw a ``NavProblem`` that names it.
@Suite struct ProblemCodeTests {
    static func problem(_ json: String) throws -> NavProblem {
        let decoded = try JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(json.utf8))
        return NavProblem(status: decoded.value1.status, document: decoded.value1)
    }

    @Test func aKnownCodeIsTyped() throws {
        let problem = try Self.problem(
            #"{"type":"urn:navd:problem:stack_underflow","title":"Stack underflow","status":409,"detail":"nothing to exit","code":"stack_underflow"}"#
        )
        #expect(problem.code == .stackUnderflow)
        #expect(problem.codeName == "stack_underflow")
        #expect(problem.description == "409 stack_underflow: nothing to exit")
    }

    @Test func aCodeAddedLaterIsAPlainString() throws {
        let problem = try Self.problem(
            #"{"type":"urn:navd:problem:quota_exceeded","title":"Quota exceeded","status":429,"detail":"later","code":"quota_exceeded"}"#
        )
        #expect(problem.code == nil)
        #expect(problem.codeName == "quota_exceeded")
        #expect(problem.status == 429)
        #expect(problem.description == "429 quota_exceeded: later")
    }
}
