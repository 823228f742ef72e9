/// navd's version: what `navd --version` prints, `/metrics` reports in `navd_build_info` and the
/// command line's client sends in `User-Agent`. Here, below all three, so that each reads one value.
package enum NavdVersion {
    package static let text = "0.1.0"
}
