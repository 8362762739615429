#!/usr/bin/env bash
# Session 21, call 4 (scratch): skinny M=128 kernels under ncu (ctile and cuBLAS), then attention prefill with peers.
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
cmake --build "$build" --target ctile_attention_bench -j 16 >>"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"
m=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hgmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for shape in 128x2560x4096 128x4096x4096; do
  timeout 150 ncu --csv --page raw --metrics $m -k regex:matmul --launch-skip 0 --launch-count 60 "$build/bench/ctile_gemm_bench" --rows skinny --only $shape --reps 3 > "$out/ncu_ctile_$shape.csv" 2>"$out/ncu_ctile_$shape.err"
done
cat > /tmp/tm.py <<'PY'
import torch, sys
m, n, k = map(int, sys.argv[1].split("x"))
a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
for _ in range(5): c = a @ w
torch.cuda.synchronize()
PY
for shape in 128x2560x4096 128x4096x4096; do
  timeout 90 ncu --csv --page raw --metrics $m --launch-skip 3 --launch-count 2 python3 /tmp/tm.py $shape > "$out/ncu_torch_$shape.csv" 2>"$out/ncu_torch_$shape.err"
done
echo "ncu done at $((SECONDS-t0))s"
python3 - "$out" <<'PY'
import csv, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.csv"))):
    rows = [r for r in csv.reader(open(f)) if r]
    hdr = None
    print("==", os.path.basename(f))
    for r in rows:
        if "Kernel Name" in r: hdr = r; continue
        if hdr is None or len(r) != len(hdr) or r[0].startswith("=") : continue
        d = dict(zip(hdr, r))
        if not d.get("gpu__time_duration.sum", "").replace(".", "").replace(",", "").isdigit(): continue
        print(d["Kernel Name"][:60], "dur", d["gpu__time_duration.sum"], "grid", d["launch__grid_size"], "blk", d["launch__block_size"],
              "regs", d["launch__registers_per_thread"], "smem", d["launch__shared_mem_per_block_dynamic"],
              "sm%", d["sm__throughput.avg.pct_of_peak_sustained_elapsed"], "dram%", d["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
              "hgmma%", d.get("sm__pipe_tensor_op_hgmma_cycles_active.avg.pct_of_peak_sustained_elapsed"))
PY
OUT=$out/att bash bench/attention/run.sh --prefill-only > "$out/attention_run.log" 2>&1
tail -25 "$out/att/attention_report.md" 2>/dev/null
echo "attention done at $((SECONDS-t0))s"
cp "$out"/att/attention_ctile.jsonl "$out"/att/attention_peers.jsonl "$out"/att/attention_report.md "$out"/ 2>/dev/null
tar -czf "$out/logs.tar.gz" -C "$out" $(cd "$out" && ls *.err *.log 2>/dev/null) att 2>/dev/null
rm -rf "$out/att" "$out"/*.err "$out"/*.log
