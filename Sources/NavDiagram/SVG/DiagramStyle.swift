/// What a page that shows an SVG diagram inline needs to know of its stylesheet.
package enum DiagramStyle {
    /// The text content of every SVG diagram's `<style>` element, exactly as `SVGRenderer`
    /// writes it. The web client inserts a diagram inline, and its page's Content-Security-Policy
    /// allows this one stylesheet by its hash instead of allowing any inline style.
    package static var svgStyleElementText: String { "\n" + SVGRenderer.style + "\n" }
}
