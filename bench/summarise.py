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


def us(value):
    return "n/a" if value is None else f"{value:,.0f}"


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
        paced = "-paced" in scenario
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
    kinds = [("get-c1", "one connection (`wrk -c1`): a request's latency with no queue"),
             ("get", "32 connections (`wrk -c32`), saturated: throughput; latency is mostly the queue")]
    for kind, title in kinds:
        held = OrderedDict()
        for r in rows:
            if r["kind"] == kind:
                held.setdefault(int(r["sessions"]), {})[r["round"]] = r
        if not held:
            continue
        print(f"GET, {title}. Changes are to the first row: the ratio of medians, and in brackets the "
              "median of the ratios within each round (both navds are run in turn in every round).\n")
        print("| sessions held | requests/s | mean µs | p50 µs | p99 µs | p99.9 µs | requests/s change | mean change "
              "| p50 change | p99 change | rounds (req/s) | rounds (mean µs) | non-2xx |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        first = None
        for n, by_round in held.items():
            rs = list(by_round.values())
            values = {m: median(number(r.get(m) or "") for r in rs) for m in ("rps", "mean_us", "p50_us", "p99_us", "p999_us")}
            first = first or (values, by_round)

            def change(measure):
                base, base_rounds = first
                if base_rounds is by_round or not values[measure] or not base[measure]:
                    return "—"
                paired = median(number(r.get(measure) or "") / number(base_rounds[k].get(measure) or "")
                                for k, r in by_round.items()
                                if k in base_rounds and number(r.get(measure) or "")
                                and number(base_rounds[k].get(measure) or ""))
                text = f"{values[measure] / base[measure] - 1:+.0%}"
                return text + (f" ({paired - 1:+.0%})" if paired is not None else "")

            rounds_rps = ", ".join(f"{number(r['rps']):,.0f}" for r in rs if number(r["rps"]) is not None)
            rounds_mean = ", ".join(us(number(r.get("mean_us") or "")) for r in rs)
            print(f"| {n:,} | {values['rps']:,.0f} | {us(values['mean_us'])} | {us(values['p50_us'])} "
                  f"| {us(values['p99_us'])} | {us(values['p999_us'])} | {change('rps')} | {change('mean_us')} "
                  f"| {change('p50_us')} | {change('p99_us')} | {rounds_rps} | {rounds_mean} "
                  f"| {sum(int(number(r['non2xx']) or 0) for r in rs)} |")
        print()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("http", "memory"):
        sys.exit(__doc__)
    {"http": http, "memory": memory}[sys.argv[1]](sys.argv[2])
