import NavCLI

// The `navd` binary. The command and everything it runs live in the `NavCLI` library target, so that
// the tests and the fuzz targets (Fuzz/) link the daemon without this `main`.
runNavd()
