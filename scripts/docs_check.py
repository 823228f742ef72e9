#!/usr/bin/env python3
"""Runs the examples of navd's Markdown docs against a live daemon and checks what they print.

Usage: docs_check.py URL FILE.md...   (scripts/docs-check.sh starts the daemon and passes its URL)

Only what a file marks is run, so prose and illustrations stay free:

- a fenced block right after a line `<!-- check -->`:
  - ```sh: each command (a line, with its `\\`-continued lines) runs in turn; comment lines
    `# → TEXT` after a command are the output it must print, line for line;
  - ```console: `$ COMMAND` lines run in turn; the lines after one, up to the next `$`, are the
    output it must print (standard output and error together), when there are any;
- a fenced block right after a line `<!-- check: file NAME -->`: written to the file NAME where
  the commands run, when they get there (a program the next commands run);
- a Markdown table right after a line `<!-- check: paths -->`, whose columns are the stage, the
  path sent and the answer: for each row a new session of the default graph starts at the stage
  (context `{"user": "u1"}`), the path is sent to `…/navigate`, and the answer must be the cell:
  the first `code span` is the path reached (with the word `no-op` when the version did not
  move), or, without a code span, `STATUS code` and, for `invalid_path`, `at OFFSET`.

In expected output `…` matches any text within a line, and a line that is only `…` any number of
lines. DOCS_CHECK_SHOW=1 prints every command's output too. Every checked block of one file runs in one bash process, in a fresh directory (with the
repository's Examples/ linked in), in order,
with NAVD_URL set to the daemon (and the JavaScript client at node_modules/navd-client), so a variable set in one block is there in the next.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

MARK = "\x1e"  # record separator: splits the shell's output into one piece per command


def blocks(text):
    """Yields (line number, kind, lines) for each marked block or table of a Markdown text."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        marker = lines[i].strip()
        if marker in ("<!-- check -->", "<!-- check: paths -->") or marker.startswith("<!-- check: file "):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if marker != "<!-- check: paths -->":
                fence = lines[j].strip()
                if not fence.startswith("```"):
                    raise SystemExit(f"line {j + 1}: <!-- check --> must be followed by a fenced block")
                kind = fence[3:].strip()
                if marker.startswith("<!-- check: file "):
                    kind = "file " + marker[len("<!-- check: file "):-len("-->")].strip()
                body = []
                j += 1
                while not lines[j].strip().startswith("```"):
                    body.append(lines[j])
                    j += 1
                yield i + 2, kind, body
            else:
                rows = []
                while j < len(lines) and lines[j].strip().startswith("|"):
                    rows.append((j + 1, lines[j]))
                    j += 1
                yield i + 2, "paths", rows
            i = j
        i += 1


def sh_commands(body, first_line):
    """(line, command, expected lines or None) for a ```sh block."""
    commands = []
    pending = None
    for offset, line in enumerate(body):
        number = first_line + offset + 1
        stripped = line.strip()
        if pending is not None and pending[1].endswith("\\"):
            pending[1] = pending[1] + "\n" + line
            continue
        if stripped.startswith("# →"):
            if not commands:
                raise SystemExit(f"line {number}: expected output before any command")
            commands[-1][2] = (commands[-1][2] or []) + [stripped[len("# →"):].strip()]
            continue
        if not stripped or stripped.startswith("#"):
            continue
        pending = [number, line, None]
        commands.append(pending)
    return commands


def console_commands(body, first_line):
    """(line, command, expected lines or None) for a ```console block."""
    commands = []
    for offset, line in enumerate(body):
        number = first_line + offset + 1
        if line.startswith("$ "):
            commands.append([number, line[2:], []])
        elif commands and commands[-1][1].endswith("\\") and not commands[-1][2]:
            commands[-1][1] += "\n" + line
        elif commands:
            commands[-1][2].append(line.rstrip())
        elif line.strip():
            raise SystemExit(f"line {number}: output before any $ command")
    for command in commands:
        while command[2] and not command[2][-1]:
            command[2].pop()
        if not command[2]:
            command[2] = None
    return commands


def line_pattern(expected):
    return re.compile("^" + ".*?".join(re.escape(part) for part in expected.split("…")) + "$")


def matches(expected, actual):
    """Whether actual lines match expected ones, `…` lines standing for any number of lines."""
    if not expected:
        return not actual
    if expected[0].strip() == "…":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and bool(line_pattern(expected[0].rstrip()).match(actual[0].rstrip())) \
        and matches(expected[1:], actual[1:])


def run_shell(commands, url, workdir):
    """Runs the commands in one bash; returns each command's output lines."""
    script = ["exec 2>&1", "set +e"]
    for index, (_, command, _) in enumerate(commands):
        script.append(f"printf '\\n{MARK}%d\\n' {index}")
        script.append(command)
    script.append(f"printf '\\n{MARK}end\\n'")
    env = dict(os.environ, NAVD_URL=url)
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=workdir, env=env,
                            capture_output=True, text=True, timeout=120)
    pieces = result.stdout.split("\n" + MARK)[1:]
    outputs = []
    for piece in pieces[:-1]:
        text = piece.split("\n", 1)[1] if "\n" in piece else ""
        outputs.append(text.rstrip("\n").split("\n") if text.strip("\n") else [])
    return outputs


def request(url, method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def cells(row):
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def code_span(cell):
    found = re.search(r"`([^`]*)`", cell)
    return found.group(1) if found else None


def check_paths(rows, url):
    """Checks a table of (stage, path sent, answer) rows; returns the failures."""
    failures = []
    for number, row in rows[2:]:  # the header and its rule
        stage_cell, sent_cell, answer_cell = cells(row)[:3]
        stage, sent = code_span(stage_cell), code_span(sent_cell)
        if stage is None or sent is None:
            failures.append(f"line {number}: the stage and the path must be code spans")
            continue
        status, created = request(url, "POST", "/v1/sessions", {"start": stage, "context": {"user": "u1"}})
        if status != 201:
            failures.append(f"line {number}: the stage {stage} was refused: {created}")
            continue
        status, answer = request(url, "POST", f"/v1/sessions/{created['id']}/navigate", {"path": sent}, created["token"])
        if status == 200:
            got = f"`{answer['path']}`" + (" no-op" if answer["version"] == created["version"] else "")
            expected_path = code_span(answer_cell)
            ok = expected_path == answer["path"] and (("no-op" in answer_cell) == (answer["version"] == created["version"]))
        else:
            got = f"{status} {answer.get('code')}" + (f" at {answer['offset']}" if "offset" in answer else "")
            ok = code_span(answer_cell) is None and answer_cell.startswith(got) and \
                (answer_cell[len(got):] == "" or not answer_cell[len(got)].isdigit())
        request(url, "DELETE", f"/v1/sessions/{created['id']}", token=created["token"])
        if not ok:
            failures.append(f"line {number}: {stage} + {sent}: the table says {answer_cell!r}, navd answered {got}")
    return failures


def check_file(path, url):
    text = open(path, encoding="utf-8").read()
    shell_commands = []
    failures = []
    checked = 0
    for first_line, kind, body in blocks(text):
        if kind == "paths":
            failures += check_paths(body, url)
            checked += len(body) - 2
        elif kind == "sh":
            shell_commands += sh_commands(body, first_line)
        elif kind == "console":
            shell_commands += console_commands(body, first_line)
        elif kind.startswith("file "):
            # Written where the shell runs, when the shell gets there.
            shell_commands.append([first_line, f"cat > {kind[5:]} <<'NAVD_DOCS_FILE'\n" + "\n".join(body) + "\nNAVD_DOCS_FILE", None])
        else:
            raise SystemExit(f"{path}:{first_line}: a checked block must be sh or console, not {kind!r}")
    with tempfile.TemporaryDirectory() as workdir:
        # As a reader in a checkout would: the example graphs at Examples/.
        repository = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        os.symlink(os.path.join(repository, "Examples"), os.path.join(workdir, "Examples"))
        # And the JavaScript client as a reader who installed it has it: `import … from "navd-client"`.
        os.mkdir(os.path.join(workdir, "node_modules"))
        os.symlink(os.path.abspath(os.path.join(repository, "clients", "js")), os.path.join(workdir, "node_modules", "navd-client"))
        outputs = run_shell(shell_commands, url, workdir) if shell_commands else []
    if len(outputs) != len(shell_commands):
        failures.append(f"{len(shell_commands)} commands printed {len(outputs)} pieces of output: a command the check cannot cut out on its own (a loop or a quote over several lines?)")
    for (number, command, expected), actual in zip(shell_commands, outputs):
        if os.environ.get("DOCS_CHECK_SHOW"):  # for writing docs: every command's output
            print(f"--- line {number}: {command}\n" + "\n".join(actual))
        if expected is None:
            continue
        checked += 1
        if not matches(expected, actual):
            failures.append(f"line {number}: {command.splitlines()[0]}\n  expected:\n"
                            + "\n".join("    " + line for line in expected)
                            + "\n  got:\n" + "\n".join("    " + line for line in actual))
    for failure in failures:
        print(f"{path}: {failure}", file=sys.stderr)
    print(f"{path}: {checked} outputs checked, {len(failures)} differences")
    return not failures


def main():
    if len(sys.argv) < 3:
        raise SystemExit("usage: docs_check.py URL FILE.md...")
    url = sys.argv[1].rstrip("/")
    results = [check_file(path, url) for path in sys.argv[2:]]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
