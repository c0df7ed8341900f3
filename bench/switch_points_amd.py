#!/usr/bin/env python3
"""Regenerates bench/results/switch-points-amd.csv and the generated parts of
bench/results/switch-points-amd.md: the DMA timing model's predicted switch
points between GPU-initiated SDMA and a load/store kernel on AMD GPUs, per
collective at 8 ranks (predictions: no AMD GPU was used).

The plans come from schedules/ (every DMA variant, with and without
prelaunch), compiled by sdma-run; the times and switch points from
sdma-switch-points (C++, runtime/tools/sdma-switch-points.cpp) with the
committed profiles runtime/profiles/mi355x-sdma-gpu.json and
mi300x-sdma-gpu.json, and with variants of them changed one parameter at a
time (the sensitivity table). This script only runs the tools and formats.

usage: bench/switch_points_amd.py [--bin BUILD/bin] [--check]
  --bin    where sdma-run and sdma-switch-points are (default: build/bin)
  --check  regenerate in memory and compare with the committed files
           (exit 1 when they differ); writes nothing
"""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
CSV_PATH = os.path.join(RESULTS, "switch-points-amd.csv")
MD_PATH = os.path.join(RESULTS, "switch-points-amd.md")
SCHEDULES = ["all_gather_direct", "all_gather_bcast", "all_gather_ring",
             "all_to_all_direct", "all_to_all_swap"]
VARIANTS = ["pcpy", "bcst", "swap", "b2b"]  # ties go to the first
RANKS = 8
SIZES = "1K:1G"
PROFILES = [("MI355X", "runtime/profiles/mi355x-sdma-gpu.json"),
            ("MI300X", "runtime/profiles/mi300x-sdma-gpu.json")]
# AMD's published switch points (../shared/SDMA-PACKETS.md; ROCm blog
# "GPU-Initiated DMA Copy Engines in RCCL and rocSHMEM"), and the first size
# of the power-of-two sweep that meets each.
PUBLISHED = {"all_gather": ("RCCL: GPU-initiated SDMA from 512 KiB", 512 << 10),
             "all_to_all": ("RCCL: GPU-initiated SDMA above 32 MiB", 64 << 20)}
# One parameter changed at a time: (GPU, what, {section: {key: value}}).
SENSITIVITY = [
    ("MI355X", "ld/st rate 75 % of 420 GB/s (a kernel below its peak)",
     {"ldst": {"peer_GBps": 315.0}}),
    ("MI355X", "0.2 us per packet (DMA-Latte's MI300X) instead of mori's 2.0, "
     "same 2.8 us lone-copy fixed cost",
     {"parameters": {"per_command_us": 0.2, "engine_startup_us": 2.6}}),
    ("MI300X", "mori's 2.0 us per packet instead of 0.2, same 3.5 us "
     "lone-copy fixed cost",
     {"parameters": {"per_command_us": 2.0, "engine_startup_us": 1.5}}),
    ("MI300X", "ld/st rate 385 GB/s (the SDMA engines' 7 x 55)",
     {"ldst": {"peer_GBps": 385.0}}),
]
# Bisection steps for the ld/st fixed cost that meets a published point.
STEPS = 12


def run(args):
    return subprocess.run(args, capture_output=True, text=True,
                          check=True).stdout


def make_plans(bin_dir, out):
    """Every variant's plan of every schedule, without and with prelaunch,
    in the order the tool breaks ties by."""
    plans = []
    for prelaunch in (False, True):
        folder = os.path.join(out, "prelaunch" if prelaunch else "plain")
        os.makedirs(folder, exist_ok=True)
        for schedule in SCHEDULES:
            for variant in VARIANTS:
                path = os.path.join(folder, f"{schedule}.{variant}.plan.json")
                run([os.path.join(bin_dir, "sdma-run"),
                     os.path.join(ROOT, "schedules", schedule + ".mlir"),
                     f"--ranks={RANKS}", f"--variant={variant}",
                     "--backend=sim", "-b", "1K", "-e", "1K", "--iters=1",
                     f"--emit-plan={path}"] +
                    (["--prelaunch"] if prelaunch else []))
                plans.append(path)
    return plans


def predict(bin_dir, profile, plans):
    """(rows as dicts, {(collective, mode): bytes or None})."""
    text = run([os.path.join(bin_dir, "sdma-switch-points"),
                f"--profile={profile}", f"--sizes={SIZES}"] + plans)
    rows = list(csv.DictReader(
        line for line in text.splitlines() if not line.startswith("#")))
    switches = {}
    for line in text.splitlines():
        m = re.match(r"# switch,(\w+),(\d+),([\w-]+),(\w+)$", line)
        if m:
            switches[(m[1], m[3])] = None if m[4] == "none" else int(m[4])
    wins = {}
    for line in text.splitlines():
        m = re.match(r"# (\w+) at \d+ ranks: (\S+) .*it wins at: (.*) "
                     r"\(predicted\)$", line)
        if m:
            wins[(m[1], "gpu-sdma" if m[2] == "GPU-initiated" else
                  "host-sdma")] = m[3]
    return rows, switches, wins


def human(n):
    if n is None:
        return "none up to 1 GiB"
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or n % 1024:
            return f"{n} {unit}"
        n //= 1024
    return f"{n} TiB"


def us(text):
    return f"{float(text):.1f}"


def switch_table(results):
    out = ["| GPU (profile) | collective | GPU-initiated SDMA beats ld/st "
           "from (per rank) | host-submitted SDMA beats ld/st at | "
           "AMD published |",
           "|---|---|---|---|---|"]
    for gpu, profile in PROFILES:
        rows, switches, wins = results[gpu]
        for collective in ("all_gather", "all_to_all"):
            point = switches[(collective, "gpu-sdma")]
            per_chunk = f" ({human(point // RANKS)} per peer)" if point else ""
            out.append(f"| {gpu} (`{os.path.basename(profile)}`) | "
                       f"{collective} | {human(point)}{per_chunk} | "
                       f"{wins[(collective, 'host-sdma')]} | "
                       f"{PUBLISHED[collective][0]} |")
    return "\n".join(out)


def size_table(results):
    out = []
    for gpu, _ in PROFILES:
        rows = results[gpu][0]
        out += [f"**{gpu}** (predicted us; best plan in brackets)", "",
                "| collective | per rank | GPU-initiated SDMA | "
                "host-submitted SDMA | ld/st kernel | fastest |",
                "|---|---|---|---|---|---|"]
        for r in rows:
            size = int(r["bytes_per_rank"])
            if (size.bit_length() - 11) % 2:  # 1 KiB, 4 KiB, 16 KiB, ...
                continue
            out.append(f"| {r['collective']} | {human(size)} | "
                       f"{us(r['gpu_sdma_us'])} ({r['gpu_sdma_plan']}) | "
                       f"{us(r['host_sdma_us'])} ({r['host_sdma_plan']}) | "
                       f"{us(r['ldst_us'])} | {r['fastest']} |")
        out.append("")
    return "\n".join(out).rstrip()


def variant(gpu, change, path):
    """Writes `gpu`'s committed profile with `change` applied to `path`."""
    with open(os.path.join(ROOT, dict(PROFILES)[gpu])) as f:
        profile = json.load(f)
    for section, values in change.items():
        profile[section].update(values)
    with open(path, "w") as f:
        json.dump(profile, f)
    return profile


def switches_with(bin_dir, plans, gpu, change, path):
    variant(gpu, change, path)
    return predict(bin_dir, path, plans)[1]


def sensitivity_table(bin_dir, plans, results, tmp):
    out = ["| GPU | changed (one parameter at a time) | all_gather | "
           "all_to_all |", "|---|---|---|---|"]
    for gpu, _ in PROFILES:
        s = results[gpu][1]
        out.append(f"| {gpu} | nothing (the committed profile) | "
                   f"{human(s[('all_gather', 'gpu-sdma')])} | "
                   f"{human(s[('all_to_all', 'gpu-sdma')])} |")
    path = os.path.join(tmp, "variant.json")
    for gpu, what, change in SENSITIVITY:
        s = switches_with(bin_dir, plans, gpu, change, path)
        out.append(f"| {gpu} | {what} | "
                   f"{human(s[('all_gather', 'gpu-sdma')])} | "
                   f"{human(s[('all_to_all', 'gpu-sdma')])} |")
    return "\n".join(out)


def matching_table(bin_dir, plans, tmp):
    """The ld/st fixed cost (launch + sync) from which the model's switch
    point is at or below AMD's published one, by bisection on sync_us."""
    out = ["| GPU | collective | AMD published | ld/st fixed cost (launch + "
           "sync) from which the model's switch point is at or below it | "
           "the model's switch point there | the profile's ld/st fixed cost "
           "|", "|---|---|---|---|---|---|"]
    path = os.path.join(tmp, "fixed.json")
    for gpu, _ in PROFILES:
        base = variant(gpu, {}, path)["ldst"]
        for collective, (text, target) in PUBLISHED.items():
            def point(sync):
                return switches_with(bin_dir, plans, gpu,
                                     {"ldst": {"sync_us": sync}},
                                     path)[(collective, "gpu-sdma")]

            def meets(sync):
                at = point(sync)
                return at is not None and at <= target
            lo, hi = 0.0, 64.0
            if meets(lo):
                needed, hi = f"any: already at {base['launch_us']:.1f} us " \
                    "(launch, no sync)", lo
            elif not meets(hi):
                needed = f"none up to {base['launch_us'] + hi:.0f} us"
            else:
                for _ in range(STEPS):
                    mid = (lo + hi) / 2
                    lo, hi = (lo, mid) if meets(mid) else (mid, hi)
                needed = f"{base['launch_us'] + hi:.2f} us"
            out.append(f"| {gpu} | {collective} | {text} | {needed} | "
                       f"{human(point(hi))} | "
                       f"{base['launch_us'] + base['sync_us']:.1f} us |")
    return "\n".join(out)


def csv_text(results):
    buf = io.StringIO()
    writer = None
    for gpu, _ in PROFILES:
        for r in results[gpu][0]:
            row = {"gpu": gpu, **r}
            if writer is None:
                writer = csv.DictWriter(buf, fieldnames=list(row),
                                        lineterminator="\n")
                writer.writeheader()
            writer.writerow(row)
    return buf.getvalue()


def fill(md, name, body):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(md):
        sys.exit(f"{MD_PATH}: no {begin} ... {end} section to fill")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", md)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plans = make_plans(args.bin, tmp)
        results = {gpu: predict(args.bin, os.path.join(ROOT, profile), plans)
                   for gpu, profile in PROFILES}
        sensitivity = sensitivity_table(args.bin, plans, results, tmp)
        matching = matching_table(args.bin, plans, tmp)
    for gpu, _ in PROFILES:
        for (collective, mode), point in sorted(results[gpu][1].items()):
            print(f"{gpu} {collective} {mode}: {human(point)}")
    table = csv_text(results)
    with open(MD_PATH) as f:
        old_md = f.read()
    md = fill(old_md, "switch-points", switch_table(results))
    md = fill(md, "sizes", size_table(results))
    md = fill(md, "sensitivity", sensitivity)
    md = fill(md, "matching", matching)
    if args.check:
        with open(CSV_PATH) as f:
            stale = [p for p, ok in ((CSV_PATH, f.read() == table),
                                     (MD_PATH, old_md == md)) if not ok]
        for path in stale:
            print(f"STALE: {path} differs from the model's predictions; "
                  f"rerun bench/switch_points_amd.py")
        if not stale:
            print("the committed table matches the model")
        return 1 if stale else 0
    with open(CSV_PATH, "w") as f:
        f.write(table)
    with open(MD_PATH, "w") as f:
        f.write(md)
    print(f"wrote {CSV_PATH} and {MD_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
