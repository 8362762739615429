// ctile sanitize -- PROG ARGS: the program under compute-sanitizer (memcheck, then racecheck, by
// default) with ctile-aware settings; without a GPU (or with --cpu), on the CPU backend with the
// race checker on, which checks tile UncheckedMut stores and SIMT kernels' unchecked accesses
// (shared memory, get_unchecked_mut, UncheckedPtr), bounds, and barrier and warp divergence.
#include <cstdio>
#include <string>
#include <vector>

#include "ctile/runtime/device.hpp"
#include "tool.hpp"

namespace ctile::tool {

int sanitize(const SanitizeOptions& o) {
  const bool gpu = !o.cpu && (o.gpu || cuda_available());
  std::vector<std::pair<std::vector<std::string>, std::vector<std::pair<std::string, std::string>>>> runs;
  if (gpu) {
    std::string cs = find_tool("compute-sanitizer");
    if (cs.empty()) {
      if (!o.dry_run) {
        std::fprintf(stderr,
                     "ctile sanitize: compute-sanitizer is not in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin (it comes "
                     "with the CUDA toolkit); --cpu runs the CPU backend's race checker instead\n");
        return 1;
      }
      cs = "compute-sanitizer";
    }
    const std::vector<std::string> tools =
        o.tool == "all" ? std::vector<std::string>{"memcheck", "racecheck"} : std::vector<std::string>{o.tool};
    for (const std::string& t : tools) {
      std::vector<std::string> argv = {cs, "--tool", t, "--error-exitcode", "86", "--print-limit",
                                       std::to_string(o.print_limit), "--target-processes", "all"};
      if (t == "memcheck")
        argv.insert(argv.end(), {"--leak-check", "full", "--check-api-memory-access", "yes"});
      if (t == "racecheck") argv.insert(argv.end(), {"--racecheck-report", "all"});
      argv.insert(argv.end(), o.program.begin(), o.program.end());
      // The kernels must run on the GPU, not be moved to the CPU by the race checker.
      runs.push_back({argv, {{"CTILE_BACKEND", "cuda"}, {"CTILE_RACE_CHECK", ""}}});
    }
  } else {
    if (!o.cpu)
      std::printf("ctile sanitize: no usable GPU (%s): running on the CPU backend with the race checker\n",
                  cuda_unavailable_reason().c_str());
    runs.push_back({o.program, {{"CTILE_BACKEND", "cpu"}, {"CTILE_RACE_CHECK", "1"}}});
  }
  int status = 0;
  for (const auto& [argv, env] : runs) {
    std::string envs;
    for (const auto& [k, v] : env) envs += v.empty() ? "-u " + k + " " : k + "=" + v + " ";
    std::printf("ctile sanitize: %senv %s%s\n", o.dry_run ? "would run: " : "", envs.c_str(), shell_quote(argv).c_str());
    if (o.dry_run) continue;
    const int rc = run_process(argv, env);
    std::printf("ctile sanitize: %s %s (exit status %d)\n", gpu ? argv[2].c_str() : "CPU race checker",
                rc == 0 ? "found nothing" : "FAILED", rc);
    if (rc != 0 && status == 0) status = rc;
  }
  return status;
}

}  // namespace ctile::tool
