import Foundation
import NavWire
import Testing

/// Requests a review found could hurt the daemon: each must leave it bounded and serving.
@Suite(.serialized) struct ReviewRegressionTests {
    /// A client-chosen method token must not become a metrics label (unbounded series).
    @Test func unusualMethodsShareOneMetricsLabel() throws {
        let navd = try DaemonHarness()
        for index in 0..<5 {
            _ = try navd.raw(Array("M\(index)XYZ /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), validate: false)
        }
        let metrics = try navd.request("GET", "/metrics").text
        #expect(!metrics.contains("M0XYZ"))
        #expect(metrics.contains("method=\"other\""))
        #expect(try navd.stop() == 0)
    }

    /// A bad If-Match on a request without a token is 401, not 412: authentication comes first.
    @Test func authenticationComesBeforeIfMatch() throws {
        let navd = try DaemonHarness()
        let session = try navd.createSession()
        let answer = try navd.send("POST", session.url + "/back", headers: ["If-Match": "x"])
        #expect(answer.status == 401)
        #expect(try navd.stop() == 0)
    }

    /// State nested as deep as a request may nest it is stored and read back after a restart.
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
