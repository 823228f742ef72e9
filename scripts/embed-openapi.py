#!/usr/bin/env python3
"""Writes openapi.yaml into Sources/navd/API/OpenAPIDocument.swift, which navd serves at /openapi.yaml.

With --check, exits 1 when the Swift copy differs from openapi.yaml (so the two never drift).
"""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
spec = (root / "openapi.yaml").read_text(encoding="utf-8")
target = root / "Sources" / "navd" / "API" / "OpenAPIDocument.swift"
if not spec.endswith("\n"):
    sys.exit("openapi.yaml must end with a newline")
if '"""#' in spec:
    sys.exit("openapi.yaml contains the raw-string terminator \"\"\"#")
swift = (
    "// Generated from openapi.yaml by scripts/embed-openapi.py (`make openapi`); do not edit.\n"
    "/// The API contract, served at `/openapi.yaml`.\n"
    "enum OpenAPIDocument {\n"
    # A multi-line literal drops the line break before its closing delimiter: add one so the
    # served bytes end exactly as the file does.
    '    static let yaml = #"""\n' + spec + "\n" + '"""#\n'
    "}\n"
)
if "--check" in sys.argv:
    if not target.exists() or target.read_text(encoding="utf-8") != swift:
        sys.exit("Sources/navd/API/OpenAPIDocument.swift is out of date: run `make openapi`")
else:
    target.write_text(swift, encoding="utf-8")
