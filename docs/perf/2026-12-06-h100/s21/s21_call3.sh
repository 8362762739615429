#!/usr/bin/env bash
# Session 21, call 3 (scratch): GPU suites with programmatic edges; launch overhead with and without them; sanitizer on graph tests.
t0=$SECONDS
SKIP_BENCH=1 SANITIZE=0 BUDGET_S=400 scripts/gpu_all.sh > /dev/null 2>&1
tail -12 $OUT/summary.txt
echo "suites done at $((SECONDS-t0))s"
export CTILE_CACHE_DIR=/tmp/kc
lo=build/gpu/bench/ctile_launch_overhead
$lo --out $OUT/launch.jsonl > $OUT/launch_overhead.log 2>&1
CTILE_PDL=0 $lo --only graph,decode > $OUT/launch_overhead_pdl0.log 2>&1
grep -h '^#' $OUT/launch_overhead.log $OUT/launch_overhead_pdl0.log | grep -v "cuda:0 (\|# raw:"
echo "launch done at $((SECONDS-t0))s"
t=build/gpu/tests/gpu/test_gpu
timeout 150 compute-sanitizer --tool memcheck --track-stream-ordered-races all --error-exitcode 97 $t runtime_graph > $OUT/memcheck_graph.log 2>&1; echo "memcheck runtime_graph: $?"; grep -E "ERROR SUMMARY" $OUT/memcheck_graph.log
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 97 $t runtime_graph > $OUT/racecheck_graph.log 2>&1; echo "racecheck runtime_graph: $?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY" $OUT/racecheck_graph.log
echo "all done at $((SECONDS-t0))s"
gzip -f $OUT/memcheck_graph.log $OUT/racecheck_graph.log
