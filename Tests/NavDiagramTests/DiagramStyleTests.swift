import NavCore
import Testing

@testable import NavDiagram

/// The web client's Content-Security-Policy allows the diagram's stylesheet by the hash of
/// ``DiagramStyle/svgStyleElementText``: it must be exactly what every SVG's `<style>` holds.
@Suite struct DiagramStyleTests {
    @Test(arguments: DiagramLayoutTests.graphs().map(\.0))
    func everySVGHoldsExactlyThatStyleElement(_ name: String) throws {
        let graph = try #require(DiagramLayoutTests.graphs().first { $0.0 == name }?.1)
        let text = SVGRendererTests.svg(graph)
        #expect(text.components(separatedBy: "<style>").count == 2, "one <style> element")
        #expect(text.contains("<style>" + DiagramStyle.svgStyleElementText + "</style>"))
        #expect(!text.contains(" style=\""), "a style attribute would need 'unsafe-inline'")
    }
}
