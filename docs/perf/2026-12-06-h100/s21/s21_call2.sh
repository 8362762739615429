#!/usr/bin/env bash
# Session 21, call 2 (scratch, not committed): skinny/GEMV rows with replay timing + peers; issue 9 graph experiments.
source bench/gemm/common.sh
t0=$SECONDS
build_gemm_bench "$out/build.log" || exit 1
cmake --build "$build" --target ctile_launch_overhead null_cuda -j 16 >>"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
echo "built at $((SECONDS-t0))s"
export CTILE_CACHE_DIR="$build/kernel-cache"; rm -rf "$CTILE_CACHE_DIR"
lo="$build/bench/ctile_launch_overhead"
# Issue 9: graph replay ctile vs raw, variants of the host side.
for v in "-" "CTILE_COMPLETER_WAIT=poll" "CTILE_SPIN_US=0" "CTILE_COMPLETER_BATCH_US=0"; do
  if [[ $v == - ]]; then "$lo" --only graph > "$out/lo_graph_default.log" 2>&1; else env "$v" "$lo" --only graph > "$out/lo_graph_${v%%=*}.log" 2>&1; fi
done
grep -h "^# \|^#  " "$out"/lo_graph_*.log | grep -v "cuda:0" > "$out/launch_graph_summary.txt"
timeout 120 ncu --graph-profiling graph --metrics gpu__time_duration.sum "$lo" --only graph > "$out/ncu_graph.log" 2>&1
grep -E "gpu__time_duration" "$out/ncu_graph.log" | awk "{print \$(NF-1), \$NF}" | uniq -c >> "$out/launch_graph_summary.txt"
echo "launch done at $((SECONDS-t0))s"; cat "$out/launch_graph_summary.txt"
# Issue 8: decode-shape rows (replay timing) and peers.
"$build/bench/ctile_gemm_bench" --rows gemv,skinny --out "$out/skinny_ctile.jsonl" > "$out/skinny_ctile.log" 2>&1
echo "ctile skinny done at $((SECONDS-t0))s"
timeout 240 python3 bench/gemm/peers.py --kernels gemv,skinny --out "$out/skinny_peers.jsonl" > "$out/skinny_peers.log" 2>&1
echo "peers done at $((SECONDS-t0))s"
python3 bench/gemm/report.py --out "$out" "$out/skinny_ctile.jsonl" "$out/skinny_peers.jsonl" > /dev/null 2>&1
grep -iE "skinny|gemv" "$out/gemm_report.md" | head -40
tar -czf "$out/logs.tar.gz" -C "$out" --exclude='*.png' $(cd "$out" && ls *.log) 2>/dev/null
rm -f "$out"/*.log "$out"/gemm_tflops.png
