import Foundation
import NavWire
import Testing

@testable import NavTestSupport

/// Requests a review found could hurt the daemon: each must leave it bounded and serving.
@Suite(.serialized) struct ReviewRegressionTests {
    /// A client-chosen method token must not become a metrics label (unbounded series).
    @Test func unusualMethodsShareOneMetricsLabel() throws {
        let navd = try startNavd()
        for index in 0..<5 {
            _ = try navd.request("M\(index)XYZ", "/healthz", validate: false)
        }
        let metrics = try navd.request("GET", "/metrics").text
        #expect(!metrics.contains("M0XYZ"))
        #expect(metrics.contains("method=\"other\""))
        #expect(try navd.stop() == 0)
    }

    /// A bad If-Match on a request without a token is 401, not 412: authentication comes first.
    @Test func authenticationComesBeforeIfMatch() throws {
        let navd = try startNavd()
        let session = try navd.createSession()
        let answer = try navd.send("POST", session.url + "/back", headers: ["If-Match": "x"])
        #expect(answer.status == 401)
        #expect(try navd.stop() == 0)
    }

    /// State nested as deep as a request may nest it is stored and read back after a restart (of
    /// the binary: a restart is a new process).
    @Test func deeplyNestedStateSurvivesARestart() throws {
        let folder = try TemporaryFolder()
        let store = "sqlite:\(folder.path)/navd.db"
        var navd = try DaemonHarness(store: store)
        let session = try navd.createSession()
        var patch: JSON = 1
        for _ in 0..<62 { patch = .object(["a": patch]) }
        #expect(try navd.patchState(session, screen: "e1", patch).status == 200)
        let before = try navd.view(session)
        #expect(try navd.stop() == 0)
        navd = try DaemonHarness(store: store)
        #expect(try navd.view(session) == before)
        #expect(try navd.stop() == 0)
    }
}
