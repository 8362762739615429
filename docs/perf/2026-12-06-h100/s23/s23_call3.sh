#!/usr/bin/env bash
# Session 23, call 3: where the 64 x 64 decode-shape product's warps wait, instruction by
# instruction (ncu source counters, SASS), TMA + producer (CTILE_TMA=1), 128x2560x4096; and the
# producer's copies alone (the consumers' products skipped is not expressible: instead the same
# kernel with 64 x 64 x 128 steps, half the K steps of twice the bytes); issue 9's launch rows
# with the cuStreamWriteValue64 completion variant. QUICK=1: K steps of 128 at two shapes and two
# CTAs an SM alone (what the device time left allowed).
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
export CTILE_CACHE_DIR="$build/kernel-cache"
b="$build/bench/ctile_gemm_bench"
show() {  # show LABEL FILE.jsonl: each row that passed, its shape, configuration and time
  python3 -c "import json,sys; [print(sys.argv[1], r['shape'], r['config'], round(r['ms']*1e3,1), 'us') for r in map(json.loads, open(sys.argv[2])) if r.get('ok')]" "$1" "$2"
}
bk_shapes=128x2560x4096,16x2560x4096,128x6144x2560; bk_cfg=64x64x64,64x64x128,64x128x64,64x128x128
[[ "${QUICK:-0}" == 1 ]] && { bk_shapes=128x2560x4096,16x2560x4096; bk_cfg=64x64x64,64x64x128; }
timeout 80 env CTILE_TMA=1 "$b" --rows skinny --only $bk_shapes --config $bk_cfg --reps 30 --out "$out/bk.jsonl" > "$out/bk.log" 2>&1
show bk "$out/bk.jsonl"
echo "bk done at $((SECONDS-t0))s"
# two consumer warpgroups on an SM: two CTAs of the producer kernel (CTILE_MIN_CTAS=2, with the
# consumers' setmaxnreg fitted to the CTA's share), or two tile blocks in one CTA (no producer);
# pf3: cp.async with the loads issued 3 K steps ahead instead of 1
variants="min2 pf3 bpc2"; [[ "${QUICK:-0}" == 1 ]] && variants="min2 pf3"
for v in $variants; do
  case $v in min2) e="CTILE_TMA=1 CTILE_MIN_CTAS=2";; bpc2) e="CTILE_TMA=1 CTILE_BLOCKS_PER_CTA=2";; pf3) e="CTILE_TMA=-1 CTILE_LOOP_PREFETCH=3";; esac
  timeout 45 env $e "$b" --rows skinny --only 128x2560x4096 --config 64x64x64 --reps 30 --out "$out/occ_$v.jsonl" > "$out/occ_$v.log" 2>&1
  show "$v" "$out/occ_$v.jsonl"
  echo "$v done at $((SECONDS-t0))s"
done
if [[ "${QUICK:-0}" != 1 ]]; then
# issue 9: the launch path with a completion thread that never enters the driver (raw rows)
cmake --build "$build" --target ctile_launch_overhead -j "$(nproc)" >> "$out/build.log" 2>&1
timeout 40 "$build/bench/ctile_launch_overhead" --only enqueue,bound --reps 7 --out "$out/launch.jsonl" > "$out/launch.log" 2>&1
python3 -c "import json,sys; [print(r['impl'], r['what'], r['us']) for r in map(json.loads, open(sys.argv[1]))]" "$out/launch.jsonl"
echo "launch done at $((SECONDS-t0))s"
fi
if [[ "${NCU:-0}" == 1 ]]; then
timeout 120 env CTILE_TMA=1 ncu --section SourceCounters --section WarpStateStats --section SpeedOfLight -k regex:bench__matmul --launch-skip 3 --launch-count 1 \
  -o "$out/tma64" "$b" --rows skinny --only 128x2560x4096 --config 64x64x64 --reps 3 > "$out/ncu.log" 2>&1
echo "ncu rc $? at $((SECONDS-t0))s"
ncu -i "$out/tma64.ncu-rep" --page source --csv --print-source sass > "$out/sass.csv" 2>"$out/sass.err"
ncu -i "$out/tma64.ncu-rep" --page details > "$out/details.txt" 2>&1
python3 - "$out/sass.csv" <<'PY' > "$out/top.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if not rows: print("no rows"); sys.exit()
keys = list(rows[0].keys()); print(keys)
col = next((k for k in keys if "Warp Stall Sampling (All" in k), None)
print("col", col)
def num(x):
    try: return float(str(x).replace(",", ""))
    except: return 0.0
tot = sum(num(r[col]) for r in rows)
for i, r in sorted(enumerate(rows), key=lambda t: -num(t[1][col]))[:40]:
    print(f"{num(r[col])/tot*100:5.1f}% #{i} {r.get('Address','')} {r.get('Source','')[:110]}")
PY
head -50 "$out/top.txt"
fi
tar -czf "$out/ncu.tar.gz" -C "$out" sass.csv details.txt top.txt ncu.log bk.jsonl bk.log launch.jsonl launch.log occ_min2.jsonl occ_min2.log occ_bpc2.jsonl occ_bpc2.log occ_pf3.jsonl occ_pf3.log 2>/dev/null; rm -f "$out"/sass.csv "$out"/*.log "$out"/*.jsonl "$out"/details.txt
echo "all done at $((SECONDS-t0))s"
