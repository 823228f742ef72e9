#!/usr/bin/env python3
"""Summarise bench results as Markdown tables (medians over rounds).

    summarise.py http   http-results.tsv     (written by bench/run.sh)
    summarise.py memory memory-results.tsv   (written by bench/memory.sh)
    summarise.py live   BENCH_OUT "PARTS"     (the live-*.tsv bench/live.sh writes)
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
    return "n/a" if us is None or us < 0 else f"{us / 1000:.2f}"


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


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def kib_per(value):
    return "n/a" if value is None else f"{value / 1024:.1f} KiB"


def live_memory(rows):
    print("### Memory per idle watcher\n")
    print("VmRSS (and RssAnon) of navd with the watchers connected minus before, per watcher; the "
          "marginal cost is the difference between consecutive counts. Medians over rounds.\n")
    print("| binary | watchers | VmRSS MiB | per watcher (VmRSS) | per watcher (RssAnon) | marginal (VmRSS) | rounds (per watcher, VmRSS) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    groups = OrderedDict()
    for r in rows:
        if r["watchers"] != "held":
            groups.setdefault(r["binary"], OrderedDict()).setdefault(int(r["watchers"]), []).append(r)
    for binary, by_count in groups.items():
        previous = None
        for count, rs in by_count.items():
            per = [(number(r["rss_kib"]) - number(r["rss0_kib"])) * 1024 / count for r in rs]
            per_anon = [(number(r["anon_kib"]) - number(r["anon0_kib"])) * 1024 / count for r in rs]
            marginal = None
            if previous is not None:
                before = {r["round"]: number(r["rss_kib"]) for r in by_count[previous]}
                marginal = median((number(r["rss_kib"]) - before[r["round"]]) * 1024 / (count - previous)
                                  for r in rs if r["round"] in before)
            print(f"| {binary} | {count:,} | {median(number(r['rss_kib']) for r in rs) / 1024:,.1f} | {kib_per(median(per))} "
                  f"| {kib_per(median(per_anon))} | {kib_per(marginal) if marginal is not None else '—'} "
                  f"| {', '.join(f'{p / 1024:.1f}' for p in per)} |")
            previous = count
    held = [r for r in rows if r["watchers"] == "held"]
    for r in held:
        print(f"\n{r['binary']} round {r['round']}: {int(number(r['open']) or 0):,} watchers open after the hold, "
              f"fewest pings received by one: {r['pings_min']}.", end="")
    print("\n")


def live_fanout(rows):
    print("### Fan-out\n")
    by_round = OrderedDict()
    for r in rows:
        by_round.setdefault(r["round"], {})[r["kind"]] = r
    without = [number(v["without"]["rps"]) for v in by_round.values() if "without" in v]
    with_ = [number(v["with"]["rps"]) for v in by_round.values() if "with" in v]
    ratios = [number(v["with"]["rps"]) / number(v["without"]["rps"]) for v in by_round.values()
              if "with" in v and "without" in v and number(v["without"]["rps"])]
    if without and with_:
        print("| navigate | requests/s (median) | rounds | p99 ms (median) | navd CPU µs per navigation (median) | watcher client CPU s (median) |")
        print("| --- | ---: | --- | ---: | ---: | ---: |")
        for kind, values in (("without watchers", without), ("one watcher per session", with_)):
            key = "without" if kind.startswith("without") else "with"
            p99 = median(number(v[key]["p99_us"]) for v in by_round.values() if key in v)
            cpu = median(number(v[key].get("navd_cpu_us")) for v in by_round.values() if key in v)
            client = median(number(v[key].get("client_cpu_s")) for v in by_round.values() if key in v)
            print(f"| {kind} | {median(values):,.0f} | {', '.join(f'{x:,.0f}' for x in values)} | {ms(p99)} "
                  f"| {'n/a' if cpu is None else f'{cpu:.1f}'} | {'—' if client is None else f'{client:.2f}'} |")
        print(f"\nWith watchers / without: **{median(with_) / median(without):.2f}** (ratio of medians), "
              f"{median(ratios):.2f} (median of per-round ratios: {', '.join(f'{x:.2f}' for x in ratios)}).\n")
    paced = [v["paced"] for v in by_round.values() if "paced" in v]
    if paced:
        print("| paced run | navigations/s | delivery p50 ms | p99 ms | p99.9 ms | views before their answer | unmatched |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in paced:
            print(f"| round {r['round']} | {number(r['nav_rps']):,.0f} | {ms(number(r['lat_p50_us']))} | {ms(number(r['lat_p99_us']))} "
                  f"| {ms(number(r['lat_p999_us']))} | {r['early']} of {r['matched']} | {r['unmatched']} |")
        print(f"| median | {median(number(r['nav_rps']) for r in paced):,.0f} | {ms(median(number(r['lat_p50_us']) for r in paced))} "
              f"| {ms(median(number(r['lat_p99_us']) for r in paced))} | {ms(median(number(r['lat_p999_us']) for r in paced))} | | |")
        print()


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def live_modes(rows):
    print("### Polling modes\n")
    print("GET c32 alone, then with the watchers connected and the paced navigations fanning out to them "
          "(medians over rounds; ratio: median of per-round ratios).\n")
    print("| mode | watchers | GET alone req/s | GET with watchers req/s | with / alone | delivery p50 ms | p99 ms | p99.9 ms "
          "| worst round p99 ms | navigations/s | VmRSS MiB | unmatched | rounds (GET with watchers) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["mode"], int(r["watchers"])), []).append(r)
    for (mode, count), rs in sorted(groups.items(), key=lambda item: (item[0][1], item[0][0])):
        ratio = median(number(r["get_rps"]) / number(r["get_alone_rps"]) for r in rs
                       if number(r["get_rps"]) and number(r["get_alone_rps"]))
        worst = max((number(r["lat_p99_us"]) or 0 for r in rs), default=None)
        rounds_text = ", ".join(fmt(number(r["get_rps"]), ",.0f") for r in rs)
        rss = median(number(r["rss_kib"]) for r in rs)
        print(f"| {mode} | {count:,} | {fmt(median(number(r['get_alone_rps']) for r in rs), ',.0f')} "
              f"| {fmt(median(number(r['get_rps']) for r in rs), ',.0f')} | {fmt(ratio, '.2f')} "
              f"| {ms(median(number(r['lat_p50_us']) for r in rs))} | {ms(median(number(r['lat_p99_us']) for r in rs))} "
              f"| {ms(median(number(r['lat_p999_us']) for r in rs))} | {ms(worst)} "
              f"| {fmt(median(number(r['nav_rps']) for r in rs), ',.0f')} | {fmt(None if rss is None else rss / 1024, ',.0f')} "
              f"| {sum(int(number(r['unmatched']) or 0) for r in rs)} | {rounds_text} |")
    print()


def live_stall(rows):
    print("### The epoll stall experiment (libmicrohttpd alone, 256 connections)\n")
    print("| mode | handler delay µs | runs | runs with a timeout | req/s (median) | slowest answer ms (max over runs) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["mode"], r["delay_us"]), []).append(r)
    for (mode, delay), rs in groups.items():
        stalled = sum(1 for r in rs if (number(r["timeouts"]) or 0) > 0 or number(r["rps"]) is None)
        print(f"| {mode} | {delay} | {len(rs)} | {stalled} | {fmt(median(number(r['rps']) for r in rs), ',.0f')} "
              f"| {ms(max((number(r['max_us']) or 0 for r in rs), default=None))} |")
    print()


def live(directory, parts):
    import os
    for part, show in (("memory", live_memory), ("fanout", live_fanout), ("modes", live_modes), ("stall", live_stall)):
        path = os.path.join(directory, f"live-{part}.tsv")
        if part in parts.split() and os.path.exists(path):
            show(rows_of(path))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("http", "memory", "live"):
        sys.exit(__doc__)
    if sys.argv[1] == "live":
        live(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "memory fanout modes stall")
    else:
        {"http": http, "memory": memory}[sys.argv[1]](sys.argv[2])
