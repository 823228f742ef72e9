#!/usr/bin/env python3
"""Turn `callgrind_annotate` output (stdin) into a short Markdown table.

    callgrind_annotate --inclusive=no OUT | callgrind_top.py --requests N --top 25 --mode self

Rows: rank, % of all instructions, instructions per request, function, object
file. Swift names stay mangled: pipe the result through `swift demangle --simplified`.
"""
import argparse
import os
import re
import sys

ROW = re.compile(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*?)\s*$")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--mode", default="self")
    parser.add_argument("--what", default="instructions", help="what the counts are (for the headings)")
    args = parser.parse_args()

    total = None
    rows = []
    for line in sys.stdin:
        match = ROW.match(line)
        if not match:
            continue
        count = int(match.group(1).replace(",", ""))
        percent = float(match.group(2))
        rest = match.group(3)
        if rest == "PROGRAM TOTALS":
            total = count
            continue
        where, obj = rest, ""
        bracket = re.search(r"\s\[([^\]]*)\]$", rest)
        if bracket:
            where, obj = rest[: bracket.start()], os.path.basename(bracket.group(1))
        # "file:function" where file may be ??? or a path; the function may hold colons.
        file_part, _, function = where.partition(":")
        if not function or file_part.startswith("$"):
            function = where
        rows.append((count, percent, function.strip(), obj))

    per_request = lambda n: f"{n / args.requests:,.0f}" if args.requests else "n/a"
    what = args.what
    kind = f"own {what} (exclusive)" if args.mode == "self" else f"{what} including callees (inclusive)"
    print(f"{kind}; total {total or 0:,} {what} over {args.requests:,} requests"
          f" = {per_request(total or 0)} per request")
    print()
    print(f"| # | % of {what} | per request | function | object |")
    print("| ---: | ---: | ---: | --- | --- |")
    for rank, (count, percent, function, obj) in enumerate(rows[: args.top], 1):
        function = function.replace("|", "\\|")
        print(f"| {rank} | {percent:.2f}% | {per_request(count)} | `{function}` | {obj} |")


if __name__ == "__main__":
    main()
