from __future__ import annotations

import os

pytest_plugins = ["pytester"]

# pytest runs the plugin's own tests from several folders (pytester's): a relative NAVD_BINARY
# would name nothing there.
if os.environ.get("NAVD_BINARY"):
    os.environ["NAVD_BINARY"] = os.path.abspath(os.environ["NAVD_BINARY"])
