#!/usr/bin/env python3
"""Summarise bench results as Markdown tables (medians over rounds).

    summarise.py http   http-results.tsv     (written by bench/run.sh)
    summarise.py memory memory-results.tsv   (written by bench/memory.sh)
"""
import csv
import statistics
import sys
from collections import OrderedDict


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ms(us):
    return "n/a" if us is None else f"{us / 1000:.2f}"


def http(path):
    groups = OrderedDict()
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            groups.setdefault((row["server"], row["scenario"], int(row["connections"])), []).append(row)
    # Ratios are to the ceiling's saturated GET (its paced run only shows the latency floor).
    ceiling = {conns: median(number(r["rps"]) for r in rows)
               for (server, scenario, conns), rows in groups.items() if server == "ceiling" and scenario == "get"}
    # The ceiling's requests/s in each round, for ratios within a round: on a
    # shared machine neighbouring runs see the most similar conditions.
    ceiling_round = {(conns, r["round"]): number(r["rps"])
                     for (server, scenario, conns), rows in groups.items()
                     if server == "ceiling" and scenario == "get" for r in rows}
    print("| server | scenario | connections | requests/s | p50 ms | p99 ms | p99.9 ms "
          "| ratio to ceiling (medians) | ratio to ceiling (median of per-round ratios) | rounds (req/s) | non-2xx | socket errors |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (server, scenario, conns), rows in groups.items():
        rps = median(number(r["rps"]) for r in rows)
        # A paced run offers a fixed load: its requests/s is not a throughput to compare.
        paced = scenario.endswith("-paced")
        ratio = rps / ceiling[conns] if rps and ceiling.get(conns) and not paced else None
        per_round = None if paced else median(number(r["rps"]) / ceiling_round[(conns, r["round"])]
                                              for r in rows
                                              if number(r["rps"]) and ceiling_round.get((conns, r["round"])))
        rps_all = ", ".join(f"{number(r['rps']):,.0f}" for r in rows if number(r["rps"]) is not None)
        non2xx = sum(int(number(r["non2xx"]) or 0) for r in rows)
        errors = sum(int(number(r["socket_errors"]) or 0) for r in rows)
        print(f"| {server} | {scenario} | {conns} | {rps:,.0f} | {ms(median(number(r['p50_us']) for r in rows))} "
              f"| {ms(median(number(r['p99_us']) for r in rows))} | {ms(median(number(r['p999_us']) for r in rows))} "
              f"| {'—' if server == 'ceiling' else (f'{ratio:.0%}' if ratio is not None else 'n/a')} "
              f"| {'—' if server == 'ceiling' else (f'{per_round:.0%}' if per_round is not None else 'n/a')} "
              f"| {rps_all} | {non2xx} | {errors} |")


def memory(path):
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    rss = [r for r in rows if r["kind"] == "rss"]
    if rss:
        empty = next((number(r["rss_kib"]) for r in rss if int(r["sessions"]) == 0), None)
        print("| idle sessions held | VmRSS MiB | bytes per session over empty | projected for 1,000,000 |")
        print("| ---: | ---: | ---: | ---: |")
        for r in rss:
            n, kib = int(r["sessions"]), number(r["rss_kib"])
            per = (kib - empty) * 1024 / n if n and empty is not None else None
            print(f"| {n:,} | {kib / 1024:,.1f} | {'—' if per is None else f'{per:,.0f}'} "
                  f"| {'—' if per is None else f'{(empty * 1024 + per * 1_000_000) / 2**30:.2f} GiB'} |")
        for r in rows:
            if r["kind"] == "rss_after_get":
                print(f"\nAfter the GET runs at {int(r['sessions']):,} sessions: VmRSS "
                      f"{number(r['rss_kib']) / 1024:,.1f} MiB, peak (VmHWM) {number(r['hwm_kib']) / 1024:,.1f} MiB.")
        print()
    get = OrderedDict()
    for r in rows:
        if r["kind"] == "get":
            get.setdefault(int(r["sessions"]), []).append(r)
    if get:
        print("| sessions held | GET requests/s | mean ms | p50 ms | p99 ms | p99.9 ms | mean vs first row | p50 vs first row | p99 vs first row | rounds (req/s) | non-2xx |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        base = None
        for n, rs in get.items():
            rps = median(number(r["rps"]) for r in rs)
            mean = median(number(r.get("mean_us") or "") for r in rs)
            p50 = median(number(r["p50_us"]) for r in rs)
            p99 = median(number(r["p99_us"]) for r in rs)
            base = base or (mean, p50, p99)
            rounds = ", ".join(f"{number(r['rps']):,.0f}" for r in rs if number(r["rps"]) is not None)
            mean_change = f"{mean / base[0] - 1:+.0%}" if mean and base[0] else "n/a"
            print(f"| {n:,} | {rps:,.0f} | {ms(mean)} | {ms(p50)} | {ms(p99)} | {ms(median(number(r['p999_us']) for r in rs))} "
                  f"| {mean_change} | {p50 / base[1] - 1:+.0%} | {p99 / base[2] - 1:+.0%} "
                  f"| {rounds} | {sum(int(number(r['non2xx']) or 0) for r in rs)} |")

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("http", "memory"):
        sys.exit(__doc__)
    {"http": http, "memory": memory}[sys.argv[1]](sys.argv[2])
