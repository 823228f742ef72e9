"""pytest plugin (entry point `pytest11`): navd for tests, and tours documents as tests.

- `navd_server`: a `navd serve` (`NAVD_BINARY`, or `navd` on `PATH`) on a free port with the
  memory store, serving the graphs of the test's `navd_graph` marker, else of `--navd-graph`
  (repeatable), else of the `navd_graphs` ini option. One daemon per set of graphs lives for the
  whole run (`navd_daemons`) and is stopped at its end. A test that fails gets the daemon's log
  lines written during it in its report (section "navd log").
- `navd_client`: a `Client` of that daemon; `navd_admin`: one with its admin token.
- `navd_session`: a fresh session for each test, deleted after it: of the graph the
  `navd_session(graph=..., start=..., context=...)` marker or an indirect parameter names, else
  the daemon's default (its first graph, the only one when one is loaded).
- `--navd-tours FILE` (repeatable): each tour of the document is a test item, run against
  `--navd-url` (with `--navd-token`, the backend token) or the plugin's own daemon.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generator, Iterator

import pytest

from .client import Client, Session
from .daemon import DaemonError, NavDaemon
from .tours import ToursDocument, ToursError, TourFailure, check_graph, load, run_tour

_POOL = pytest.StashKey["DaemonPool"]()
_USED = pytest.StashKey[tuple[NavDaemon, int]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("navd")
    group.addoption("--navd-graph", action="append", default=[], metavar="FILE", help="a graph file navd_server loads (repeatable)")
    group.addoption("--navd-port", type=int, default=0, help="the port navd_server listens on (default: any free one)")
    group.addoption("--navd-tours", action="append", default=[], metavar="FILE", help="run each tour of this tours document as a test (repeatable)")
    group.addoption("--navd-url", default=None, help="run the tours against this daemon instead of starting one")
    group.addoption("--navd-token", default=None, help="the token creating a session needs at --navd-url (its backend token)")
    parser.addini("navd_graphs", type="paths", help="graph files navd_server loads", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "navd_graph(*files): the graph files this test's navd_server loads")
    config.addinivalue_line("markers", "navd_session(graph=None, start=None, context=None): how navd_session is created")
    config.stash[_POOL] = DaemonPool(port=config.getoption("--navd-port"))


def pytest_unconfigure(config: pytest.Config) -> None:
    pool = config.stash.get(_POOL, None)
    if pool is not None:
        pool.stop()


class DaemonPool:
    """The run's daemons, one per set of graph files, started when first asked for."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.daemons: dict[tuple[str, ...], NavDaemon] = {}
        self.failures: dict[tuple[str, ...], str] = {}

    def get(self, graphs: tuple[str, ...]) -> NavDaemon:
        """The daemon of `graphs`; a test that asks for one that could not start fails with navd's words."""
        daemon = self.daemons.get(graphs)
        if daemon is None and graphs not in self.failures:
            started = NavDaemon(graphs, port=self.port)
            try:
                started.start()
            except DaemonError as error:
                self.failures[graphs] = str(error)
            else:
                self.daemons[graphs] = daemon = started
        if daemon is None:
            pytest.fail(self.failures[graphs], pytrace=False)
        return daemon

    def stop(self) -> None:
        for daemon in self.daemons.values():
            daemon.stop()
        self.daemons.clear()


def configured_graphs(config: pytest.Config, node: pytest.Item | None = None) -> tuple[str, ...]:
    """The marker's graph files (relative to the test's folder, then the root), else the options'."""
    marker = node.get_closest_marker("navd_graph") if node is not None else None
    if marker is not None and node is not None:
        found = []
        for name in marker.args:
            path = Path(str(name))
            if not path.is_absolute():
                beside = node.path.parent / path
                path = beside if beside.exists() else config.rootpath / path
            found.append(str(path.resolve()))
        return tuple(found)
    given = config.getoption("--navd-graph")
    if given:
        return tuple(str((config.invocation_params.dir / g).resolve()) for g in given)
    return tuple(str(Path(p).resolve()) for p in config.getini("navd_graphs"))


@pytest.fixture(scope="session")
def navd_daemons(pytestconfig: pytest.Config) -> DaemonPool:
    """Every daemon of the run (started when first asked for, stopped at its end)."""
    return pytestconfig.stash[_POOL]


@pytest.fixture
def navd_server(request: pytest.FixtureRequest, navd_daemons: DaemonPool) -> NavDaemon:
    """The daemon serving this test's graphs: `.url`, `.port`, `.admin_token`, `.log()`."""
    daemon = navd_daemons.get(configured_graphs(request.config, request.node))
    request.node.stash[_USED] = (daemon, daemon.mark())
    return daemon


@pytest.fixture
def navd_client(navd_server: NavDaemon) -> Iterator[Client]:
    """A `Client` of `navd_server`, without a token."""
    with Client(navd_server.url) as client:
        yield client


@pytest.fixture
def navd_admin(navd_server: NavDaemon) -> Iterator[Client]:
    """A `Client` of `navd_server` with its admin token."""
    with Client(navd_server.url, navd_server.admin_token) as client:
        yield client


@pytest.fixture
def navd_session(request: pytest.FixtureRequest, navd_client: Client) -> Iterator[Session]:
    """A fresh session for the test, deleted after it: of the graph, start and context of the
    `navd_session` marker or of an indirect parameter (a graph name, or those options)."""
    marker = request.node.get_closest_marker("navd_session")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    param = getattr(request, "param", None)  # parametrized indirectly: a graph name, or the marker's options
    if isinstance(param, str):
        options["graph"] = param
    elif isinstance(param, dict):
        options.update(param)
    session = navd_client.create_session(options.get("graph"), options.get("start"), options.get("context"))
    yield session
    try:
        session.delete()
    except Exception:
        pass  # the test may have deleted it, or stopped the daemon


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    used = item.stash.get(_USED, None)
    if used is not None and report.failed:
        daemon, mark = used
        daemon.settle()
        report.sections.append(("navd log", daemon.log(since=mark) or "(nothing logged during the test)"))
    return report


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    for name in config.getoption("--navd-tours"):
        path = (config.invocation_params.dir / name).resolve()
        try:
            nodeid = str(path.relative_to(config.rootpath))
        except ValueError:
            nodeid = str(path)
        try:
            items.extend(ToursFile.from_parent(session, path=path, nodeid=nodeid).collect())
        except ToursError as error:
            raise pytest.UsageError(f"--navd-tours: {error}") from None


class ToursFile(pytest.File):
    """A tours document: one test item per tour."""

    def collect(self) -> Iterator[pytest.Item]:
        document = load(self.path)
        for index, tour in enumerate(document.tours):
            start = tour.get("start", {})
            target = start.get("path", "") if isinstance(start, dict) else ""
            yield TourItem.from_parent(self, name=f"tour {index + 1} from {target}", document=document, index=index)


class TourItem(pytest.Item):
    """One tour of a tours document, run against `--navd-url` or the plugin's daemon."""

    def __init__(self, *, document: ToursDocument, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.document = document
        self.index = index

    def runtest(self) -> None:
        url = self.config.getoption("--navd-url")
        token = self.config.getoption("--navd-token")
        if url is None:
            daemon = self.config.stash[_POOL].get(configured_graphs(self.config))
            self.stash[_USED] = (daemon, daemon.mark())
            url = daemon.url
        with Client(url, token) as client:
            warning = check_graph(client, self.document)
            if warning is not None:
                self.add_report_section("call", "navd tours", warning)
                self.warn(pytest.PytestWarning(warning))
            try:
                run_tour(client, self.document, self.index)
            except TourFailure as failure:
                if warning is None:
                    raise
                raise TourFailure(f"{failure} (note: {warning})") from None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (TourFailure, ToursError)):
            return f"{self.path.name}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, 0, self.name


__all__ = ["DaemonPool", "ToursFile", "TourItem", "configured_graphs"]
