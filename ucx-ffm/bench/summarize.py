#!/usr/bin/env python3
"""Per-round ratios RawFfmBench / ucx_perftest from the output of ffm-vs-perftest.sh.

usage: summarize.py FILE...   (rounds from several files are pooled)
Latency: half the round trip at p50 (ucx_perftest's unit); bandwidth: GB/s (10^9 bytes/s).
"""
import json
import statistics
import sys

rounds = []
for path in sys.argv[1:]:
    for line in open(path):
        if line.startswith("# round"):
            rounds.append({"header": line.strip()[2:]})
        elif line.startswith("{") and rounds:
            r = json.loads(line)
            if "error" in r:
                continue
            key = ("perftest_" + r["test"]) if r["tool"] == "ucx_perftest" else "ffm_%s_%s" % (r["api"], r["mode"])
            rounds[-1][key] = r

def value(r, key, field):
    return r[key][field] if key in r else None

rows = []
for r in rounds:
    lat = value(r, "perftest_tag_lat", "half_rtt_p50_us")
    bw = value(r, "perftest_tag_bw", "gbps")
    row = {"round": r["header"], "perftest_lat": lat, "perftest_bw": bw}
    for api in ("tag", "am"):
        row[api + "_lat"] = value(r, "ffm_%s_latency" % api, "half_rtt_p50_us")
        row[api + "_bw"] = value(r, "ffm_%s_bandwidth" % api, "gbps")
        row[api + "_lat_ratio"] = row[api + "_lat"] / lat if lat and row[api + "_lat"] else None
        row[api + "_bw_ratio"] = row[api + "_bw"] / bw if bw and row[api + "_bw"] else None
    rows.append(row)

cols = ["perftest_lat", "tag_lat", "am_lat", "tag_lat_ratio", "am_lat_ratio",
        "perftest_bw", "tag_bw", "am_bw", "tag_bw_ratio", "am_bw_ratio"]
print("| round | " + " | ".join(cols) + " |")
print("|" + " --- |" * (len(cols) + 1))
for row in rows:
    cells = ["%.3f" % row[c] if row[c] is not None else "-" for c in cols]
    print("| %s | %s |" % (row["round"], " | ".join(cells)))
medians = []
for c in cols:
    vals = [row[c] for row in rows if row[c] is not None]
    medians.append("%.3f" % statistics.median(vals) if vals else "-")
print("| median | %s |" % " | ".join(medians))
