#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs the command-line benchmarks and prints the one table `scripts/bench` ends with.

    bench.py table JMH_JSON DECODE_JSON REPLAY_JSON EMITTER_JSON    print the table
    bench.py run NAME OUT_JSON [--repeat N] -- COMMAND...            time a command (stdin from
                                                                     $BENCH_STDIN), N times: record the
                                                                     median wall time, the fastest and
                                                                     slowest, and the largest peak RSS
"""
import json
import os
import subprocess
import sys
import time


def run(name, out_path, command, repeat=1):
    """Runs `command` `repeat` times; records the median wall time (and the fastest and slowest:
    a shared machine's runs spread by a fifth or more) and the largest peak RSS."""
    times, peak, statuses = [], 0, []
    for _ in range(repeat):
        stdin = open(os.environ["BENCH_STDIN"], "rb") if os.environ.get("BENCH_STDIN") else subprocess.DEVNULL
        stdout = open(os.environ.get("BENCH_STDOUT", os.devnull), "wb")
        start = time.monotonic()
        process = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        times.append(time.monotonic() - start)
        peak = max(peak, usage.ru_maxrss)
        statuses.append(os.waitstatus_to_exitcode(status))
    times.sort()
    seconds = times[len(times) // 2] if len(times) % 2 else (times[len(times) // 2 - 1] + times[len(times) // 2]) / 2
    results = json.load(open(out_path)) if os.path.exists(out_path) else {}
    results[name] = {"seconds": seconds, "fastest": times[0], "slowest": times[-1], "runs": repeat,
                     "maxRssKiB": peak, "exit": max(statuses, key=abs)}
    json.dump(results, open(out_path, "w"), indent=1)
    spread = f" (median of {repeat}: {times[0]:.2f}-{times[-1]:.2f} s)" if repeat > 1 else ""
    print(f"  {name}: {seconds:.2f} s{spread}, peak RSS {peak / 1024:.0f} MiB", file=sys.stderr)


def runs_note(result):
    return f", median of {result['runs']}" if result.get("runs", 1) > 1 else ""


def spread(count, result):
    """The slowest and fastest run's rate, when there were several."""
    if result.get("runs", 1) < 2:
        return ""
    return f"runs {count / result['slowest']:,.0f} to {count / result['fastest']:,.0f}"


def table(jmh_path, decode_path, replay_path, emitter_path):
    rows = []
    jmh = {b["benchmark"].split(".")[-1]: b for b in json.load(open(jmh_path))}

    def codec(name):
        entry = jmh[name.replace(" ", "_")]
        mallocs = entry.get("secondaryMetrics", {}).get("Malloc (total)", {}).get("score", 0) / 1e6
        return entry["primaryMetric"]["score"] * 1e6, mallocs

    swift, swift_mallocs = codec("iBeacon decode: Swift codec")
    limit, _ = codec("iBeacon decode: C limit")
    rows.append(("iBeacon decode, ops/s (in process)", f"{swift:,.0f}", f"C limit {limit:,.0f}", swift / limit))
    rows.append(("iBeacon decode, allocations/op", f"{swift_mallocs:.2f}", "C limit 0", None))
    for name in ("Report event decode: H4 event to sightings", "iBeacon encode: advertising data",
                 "iBeacon encode: H4 LE Set Advertising Data"):
        ops, mallocs = codec(name)
        rows.append((name + ", ops/s", f"{ops:,.0f} ({mallocs:.2f} allocs/op)", "", None))

    decode = json.load(open(decode_path))
    lines = decode["lines"]
    ours = lines / decode["beacon-emit"]["seconds"]
    peers = {k: lines / v["seconds"] for k, v in decode.items() if k not in ("beacon-emit", "lines")}
    rows.append((f"decode --json, lines/s ({lines:,} lines){runs_note(decode['beacon-emit'])}", f"{ours:,.0f}",
                 spread(lines, decode["beacon-emit"]), None))
    rows.append(("decode --json, peak RSS MiB", f"{decode['beacon-emit']['maxRssKiB'] / 1024:.0f}", "", None))
    for peer, rate in sorted(peers.items(), key=lambda item: -item[1]):
        rows.append((f"decode vs {peer}, lines/s", f"{ours:,.0f}", f"{rate:,.0f} (RSS {decode[peer]['maxRssKiB'] / 1024:.0f} MiB)",
                     ours / rate))

    replay = json.load(open(replay_path))
    reports = replay["reports"]
    full = replay["replay-full"]
    quarter = replay["replay-quarter"]
    rows.append((f"scan --replay, reports/s ({reports:,} reports){runs_note(full)}", f"{reports / full['seconds']:,.0f}",
                 spread(reports, full), None))
    rows.append(("scan --replay, peak RSS MiB (full / quarter capture)", f"{full['maxRssKiB'] / 1024:.0f}",
                 f"{quarter['maxRssKiB'] / 1024:.0f}", full["maxRssKiB"] / quarter["maxRssKiB"]))
    if "replay-pcapng" in replay:
        pcapng = replay["replay-pcapng"]
        rows.append((f"scan --replay of the same as pcapng, reports/s{runs_note(pcapng)}",
                     f"{reports / pcapng['seconds']:,.0f}", f"btsnoop {reports / full['seconds']:,.0f}",
                     full["seconds"] / pcapng["seconds"]))

    if "replay-plan" in replay:
        plan = replay["replay-plan"]
        rows.append((f"replay --check: the plan of the capture (16 sets), s{runs_note(plan)}", f"{plan['seconds']:.2f}",
                     f"peak RSS {plan['maxRssKiB'] / 1024:.0f} MiB", None))

    if os.path.exists(emitter_path):
        e = json.load(open(emitter_path))
        rows.append(("emitter: start to advertising enabled, ms", f"{e['oursEnabledMs']:.1f}",
                     f"minimal client {e['minimalEnabledMs']:.1f}", e["oursEnabledMs"] / e["minimalEnabledMs"]))
        rows.append(("emitter: start to first report at a 2nd device, ms", f"{e['oursSeenMs']:.1f}",
                     f"minimal client {e['minimalSeenMs']:.1f}", e["oursSeenMs"] / e["minimalSeenMs"]))
        rows.append(("emitter: HCI round trips to enabled", str(e["oursRoundTrips"]),
                     f"minimal client {e['minimalRoundTrips']}", e["oursRoundTrips"] / e["minimalRoundTrips"]))
        if "backEnabledMs" in e:
            rows.append(("emitter: controller reset under it to enabled again, ms", f"{e['backEnabledMs']:.1f}",
                         "target 1000", e["backEnabledMs"] / 1000))
            rows.append(("emitter: reset to seen again at a 2nd device, ms (worst)",
                         f"{e['backSeenMs']:.1f} ({e['backWorstSeenMs']:.1f})", "target 1000", e["backSeenMs"] / 1000))
        if "scenarioBackSeenMs" in e:
            rows.append(("scenario (run): reset under it to enabled again, ms", f"{e['scenarioBackEnabledMs']:.1f}",
                         "target 1000", e["scenarioBackEnabledMs"] / 1000))
            rows.append(("scenario (run): reset to seen again at a 2nd device, ms (worst)",
                         f"{e['scenarioBackSeenMs']:.1f} ({e['scenarioBackWorstSeenMs']:.1f})", "target 1000",
                         e["scenarioBackSeenMs"] / 1000))

    widths = [max(len(r[0]) for r in rows), max(len(r[1]) for r in rows), max(len(r[2]) for r in rows)]
    print(f"{'figure':<{widths[0]}}  {'ours':>{widths[1]}}  {'peer or limit':>{widths[2]}}  ratio")
    print("-" * (sum(widths) + 13))
    for figure, ours_text, peer, ratio in rows:
        print(f"{figure:<{widths[0]}}  {ours_text:>{widths[1]}}  {peer:>{widths[2]}}  "
              + (f"{ratio:.2f}x" if ratio is not None else ""))


if __name__ == "__main__":
    if sys.argv[1] == "run":
        separator = sys.argv.index("--")
        options = sys.argv[4:separator]
        repeat = int(options[options.index("--repeat") + 1]) if "--repeat" in options else 1
        run(sys.argv[2], sys.argv[3], sys.argv[separator + 1:], repeat)
    else:
        table(*sys.argv[2:6])
