#!/usr/bin/env bash
# Side-by-side fio throughput of `nbdkit memory` and `spinstack serve --timing none`
# (RAID-0 and RAID-5 over member files in tmpfs), in one run on one machine.
# Needs: fio (with the nbd engine), nbdkit, python3. Usage: tools/bench/nbd-fio.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runtime="${1:-5}"
for tool in fio nbdkit python3; do
  command -v "$tool" >/dev/null || { echo "nbd-fio: $tool is not installed" >&2; exit 2; }
done
cargo build --release -q
bin="$PWD/target/release/spinstack"
work="$(mktemp -d /dev/shm/spinstack-bench.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

nbdkit --foreground --unix "$work/nbdkit.sock" --threads 16 memory 256M & pids+=($!)
"$bin" volume create "$work/raid0" --level raid0 --members 4 --member-size 64MiB --chunk 64KiB >/dev/null
"$bin" volume create "$work/raid5" --level raid5 --members 5 --member-size 64MiB --chunk 64KiB >/dev/null
"$bin" serve "$work/raid0" --socket "$work/raid0.sock" >/dev/null & pids+=($!)
"$bin" serve "$work/raid5" --socket "$work/raid5.sock" >/dev/null & pids+=($!)
for s in nbdkit raid0 raid5; do
  for _ in $(seq 100); do [ -S "$work/$s.sock" ] && break; sleep 0.05; done
done

jobs=(
  "seq-write-1M:--rw=write --bs=1M --iodepth=4"
  "seq-read-1M:--rw=read --bs=1M --iodepth=4"
  "rand-read-4K-qd1:--rw=randread --bs=4k --iodepth=1"
  "rand-read-4K-qd32:--rw=randread --bs=4k --iodepth=32"
  "rand-write-4K-qd1:--rw=randwrite --bs=4k --iodepth=1"
  "rand-write-4K-qd32:--rw=randwrite --bs=4k --iodepth=32"
)
printf '%s\n' "job,target,iops,mib_per_s,mean_latency_us" > "$work/results.csv"
for entry in "${jobs[@]}"; do
  name="${entry%%:*}"; args="${entry#*:}"
  for target in nbdkit raid0 raid5; do
    # shellcheck disable=SC2086
    fio --name="$name" --ioengine=nbd --uri="nbd+unix:///?socket=$work/$target.sock" \
        --size=200m --time_based --runtime="$runtime" $args --output-format=json > "$work/out.json"
    python3 - "$name" "$target" "$work/out.json" >> "$work/results.csv" <<'PY'
import json, sys
text = open(sys.argv[3]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
side = job["write"] if job["write"]["io_bytes"] > 0 else job["read"]
print(f'{sys.argv[1]},{sys.argv[2]},{side["iops"]:.0f},{side["bw"]/1024:.1f},{side["lat_ns"]["mean"]/1000:.1f}')
PY
  done
done
python3 - "$work/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| job | nbdkit memory IOPS | spinstack RAID-0 IOPS | spinstack RAID-5 IOPS | RAID-0 / nbdkit | RAID-5 / nbdkit |")
print("|---|---:|---:|---:|---:|---:|")
for job in dict.fromkeys(r["job"] for r in rows):
    by = {r["target"]: float(r["iops"]) for r in rows if r["job"] == job}
    print(f'| {job} | {by["nbdkit"]:.0f} | {by["raid0"]:.0f} | {by["raid5"]:.0f} | {by["raid0"]/by["nbdkit"]:.2f} | {by["raid5"]/by["nbdkit"]:.2f} |')
PY
