// ctile: the command-line tool (docs/tool.md).
//
//   ctile doctor                 what works here: driver, GPU, NVRTC, nvJitLink, cache, backend
//   ctile new NAME               a CMake project that uses ctile, with a tile and a SIMT kernel
//   ctile cache list|stats|clear the disk cache of compiled kernels
//   ctile inspect [-- PROG ...]  the IR, CUDA, PTX and SASS of a program's kernels
//   ctile sanitize -- PROG ...   compute-sanitizer memcheck and racecheck (or the CPU race checker)
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "ctile/core/error.hpp"
#include "tool.hpp"

int main(int argc, char** argv) {
  namespace t = ctile::tool;
  CLI::App app{"ctile: tile and SIMT GPU kernels with ownership (docs/tool.md)", "ctile"};
  app.require_subcommand(1);

  t::DoctorOptions doc;
  auto* doctor = app.add_subcommand("doctor", "Check the driver, the GPU, NVRTC, nvJitLink, the disk cache and which backend runs");
  doctor->add_flag("--json", doc.json, "One JSON object instead of the report");

  t::NewOptions nw;
  auto* newp = app.add_subcommand("new", "Create a CMake project that consumes ctile and builds and runs its example");
  newp->add_option("name", nw.name, "The project's name (a C identifier; also its directory)")->required();
  newp->add_option("--dir", nw.dir, "Where to create it (default: the current directory)");
  newp->add_flag("--force", nw.force, "Use an existing empty directory");

  t::CacheOptions co;
  auto* cache = app.add_subcommand("cache", "The disk cache of compiled kernels (docs/cache.md)");
  cache->require_subcommand(1);
  cache->add_option("--dir", co.dir, "The cache directory (default: CTILE_CACHE_DIR, else $XDG_CACHE_HOME/ctile)");
  auto* clist = cache->add_subcommand("list", "Every entry, least recently used first");
  clist->add_flag("--json", co.json, "JSON lines");
  auto* cstats = cache->add_subcommand("stats", "Entries, bytes and the size cap");
  cstats->add_flag("--json", co.json, "One JSON object");
  auto* cclear = cache->add_subcommand("clear", "Remove every entry");

  t::InspectOptions in;
  auto* insp = app.add_subcommand("inspect", "Show the IR, CUDA, PTX and SASS of a program's kernels from a dump directory");
  insp->add_option("--dir", in.dir, "The dump directory (CTILE_DUMP_DIR); with a program, where it dumps");
  insp->add_option("--kernel", in.kernel, "Only kernels whose name contains this");
  insp->add_flag("--ir", in.ir, "Print the tile IR");
  insp->add_flag("--cuda", in.cuda, "Print the CUDA C++ source");
  insp->add_flag("--ptx", in.ptx, "Print the PTX");
  insp->add_flag("--sass", in.sass, "Print the SASS (needs cuobjdump or nvdisasm, and ptxas for PTX-only dumps)");
  insp->add_option("program", in.program, "Run this program (after --) with dumping on, then inspect")->expected(-1);

  t::SanitizeOptions sa;
  auto* san = app.add_subcommand("sanitize", "Run a program under compute-sanitizer with ctile-aware defaults");
  san->add_option("--tool", sa.tool, "memcheck, racecheck, synccheck, initcheck, or all (memcheck then racecheck)")
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck", "all"}));
  san->add_flag("--cpu", sa.cpu, "Use the CPU backend's race checker (the default without a GPU)");
  san->add_flag("--gpu", sa.gpu, "Use compute-sanitizer even when no usable GPU is seen");
  san->add_flag("--dry-run", sa.dry_run, "Print what would run");
  san->add_option("--print-limit", sa.print_limit, "compute-sanitizer's --print-limit");
  san->add_option("program", sa.program, "The program and its arguments (after --)")->required()->expected(-1);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*doctor) return t::doctor(doc);
    if (*newp) return t::new_project(nw);
    if (*clist) return t::cache_list(co);
    if (*cstats) return t::cache_stats(co);
    if (*cclear) return t::cache_clear(co);
    if (*insp) return t::inspect(in);
    if (*san) {
      if (sa.cpu && sa.gpu) {
        std::fprintf(stderr, "ctile sanitize: --cpu and --gpu exclude each other\n");
        return 2;
      }
      return t::sanitize(sa);
    }
  } catch (const ctile::UserError& e) {
    std::fprintf(stderr, "ctile: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ctile: %s\n", e.what());
    return 1;
  }
  return 0;
}
