// The `ctile` command-line tool: one function per command (docs/tool.md). Each returns the
// process's exit status.
#pragma once

#include <string>
#include <vector>

namespace ctile::tool {

struct DoctorOptions {
  bool json = false;
};
int doctor(const DoctorOptions& o);

struct NewOptions {
  std::string name;
  std::string dir = ".";  // the project goes to dir/name
  bool force = false;     // write into an existing, empty directory
};
int new_project(const NewOptions& o);

struct CacheOptions {
  std::string dir;  // empty: the configured cache (CTILE_CACHE_DIR, ...)
  bool json = false;
};
int cache_list(const CacheOptions& o);
int cache_stats(const CacheOptions& o);
int cache_clear(const CacheOptions& o);

struct InspectOptions {
  std::string dir;                // the dump directory (default with a program: a fresh temporary one)
  std::string kernel;             // only kernels whose name contains this
  bool ir = false, cuda = false, ptx = false, sass = false;
  std::vector<std::string> program;  // run this first, dumping into dir
};
int inspect(const InspectOptions& o);

struct SanitizeOptions {
  std::string tool = "all";  // memcheck, racecheck, synccheck, initcheck, or all (memcheck + racecheck)
  bool cpu = false;          // the CPU backend with the race checker, even when a GPU is present
  bool gpu = false;          // compute-sanitizer, even when no GPU is seen (e.g. for --dry-run)
  bool dry_run = false;      // print the commands, run nothing
  int print_limit = 100;
  std::vector<std::string> program;
};
int sanitize(const SanitizeOptions& o);

// ---- helpers shared by the commands (process.cpp) ----

// The first executable called `name` in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin; empty if none.
std::string find_tool(const std::string& name);
// Runs argv with extra environment variables; stdout/stderr go to the given files when not empty
// (else they are inherited). Returns the exit status (128 + signal when killed), or 127 when the
// program cannot be started.
int run_process(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                const std::string& stdout_file = {}, const std::string& stderr_file = {});
// "a b 'c d'" for printing a command.
std::string shell_quote(const std::vector<std::string>& argv);
std::string human_bytes(unsigned long long b);

}  // namespace ctile::tool
