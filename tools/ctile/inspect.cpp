// ctile inspect: the IR, CUDA, PTX and SASS of a program's kernels, from a dump directory
// (CTILE_DUMP_DIR). With `-- PROG ARGS`, it runs the program with every dump on first; the tile
// IR comes on stderr (CTILE_DUMP_IR) and is split into one <kernel>.ir file per specialisation.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ctile/core/error.hpp"
#include "tool.hpp"

namespace ctile::tool {

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Splits the program's stderr: IR blocks ("ct.kernel @name ..." up to a line "}") into files, the
// rest back to our stderr.
void split_ir(const fs::path& dir, const std::string& log) {
  std::istringstream in(log);
  std::map<std::string, int> seen;
  std::string line, block, name, rest;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (!in_block && line.rfind("ct.kernel @", 0) == 0) {
      in_block = true;
      const std::size_t b = 11, e = line.find_first_of(" (", b);
      name = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
      for (char& c : name)
        if (c == '/' || c == ':' || c == '<' || c == '>' || c == ',' || c == ' ') c = '_';
      block.clear();
    }
    if (in_block) {
      block += line + "\n";
      if (line == "}") {
        in_block = false;
        const int k = ++seen[name];
        std::ofstream(dir / (name + (k > 1 ? "." + std::to_string(k) : "") + ".ir")) << block;
      }
    } else {
      rest += line + "\n";
    }
  }
  if (!rest.empty()) std::fputs(rest.c_str(), stderr);
}

std::string ptx_target(const std::string& ptx) {
  const std::size_t p = ptx.find(".target ");
  if (p == std::string::npos) return {};
  std::size_t e = p + 8;
  while (e < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[e])) || ptx[e] == '_')) ++e;
  return ptx.substr(p + 8, e - p - 8);
}

// SASS of a cubin (cuobjdump, else nvdisasm); of a PTX file through ptxas first. Empty + `why`
// when the tools are missing.
std::string sass_of(const fs::path& cubin, const fs::path& ptx, std::string& why) {
  const std::string cuobjdump = find_tool("cuobjdump"), nvdisasm = find_tool("nvdisasm");
  if (cuobjdump.empty() && nvdisasm.empty()) {
    why = "SASS needs cuobjdump or nvdisasm from the CUDA toolkit; neither is in PATH, $CUDA_HOME/bin or "
          "/usr/local/cuda/bin";
    return {};
  }
  fs::path bin = cubin;
  fs::path tmp;
  if (bin.empty()) {
    const std::string ptxas = find_tool("ptxas");
    const std::string target = ptx_target(read(ptx));
    if (ptxas.empty() || target.empty()) {
      why = ptxas.empty() ? "the dump has PTX only and ptxas (CUDA toolkit) is not found to assemble it"
                          : "no .target in " + ptx.string();
      return {};
    }
    tmp = fs::temp_directory_path() / ("ctile-inspect-" + std::to_string(::getpid()) + ".cubin");
    const std::string log = tmp.string() + ".log";
    if (run_process({ptxas, "-arch=" + target, ptx.string(), "-o", tmp.string()}, {}, log, log) != 0) {
      why = "ptxas failed on " + ptx.string() + ":\n" + read(log);
      return {};
    }
    fs::remove(log);
    bin = tmp;
  }
  const fs::path out = fs::temp_directory_path() / ("ctile-inspect-" + std::to_string(::getpid()) + ".sass");
  const int rc = !cuobjdump.empty() ? run_process({cuobjdump, "-sass", bin.string()}, {}, out.string(), out.string())
                                    : run_process({nvdisasm, "-c", bin.string()}, {}, out.string(), out.string());
  std::string sass = read(out);
  fs::remove(out);
  if (!tmp.empty()) fs::remove(tmp);
  if (rc != 0) {
    why = "disassembling " + bin.string() + " failed:\n" + sass;
    return {};
  }
  return sass;
}

}  // namespace

int inspect(const InspectOptions& o) {
  std::string dir = o.dir;
  int program_status = 0;
  if (!o.program.empty()) {
    if (dir.empty()) {
      std::string tmpl = (fs::temp_directory_path() / "ctile-inspect-XXXXXX").string();
      if (!::mkdtemp(tmpl.data())) throw UserError("ctile inspect: cannot make a temporary directory");
      dir = tmpl;
    }
    fs::create_directories(dir);
    const fs::path log = fs::path(dir) / "stderr.log";
    std::printf("ctile inspect: running %s with dumps into %s\n", shell_quote(o.program).c_str(), dir.c_str());
    program_status = run_process(o.program,
                                 {{"CTILE_DUMP_DIR", dir}, {"CTILE_DUMP_IR", "1"}, {"CTILE_DUMP_CUDA", "1"},
                                  {"CTILE_DUMP_PTX", "1"}, {"CTILE_QUIET", "1"}},
                                 {}, log.string());
    split_ir(dir, read(log));
    if (program_status != 0) std::fprintf(stderr, "ctile inspect: the program exited with status %d\n", program_status);
  }
  if (dir.empty()) throw UserError("ctile inspect: give a dump directory (--dir DIR) or a program to run (-- PROG ARGS)");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UserError("ctile inspect: " + dir + " is not a directory");

  // kernel (file stem) -> the kinds of dump it has.
  std::map<std::string, std::set<std::string>> kernels;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".ir" || ext == ".cu" || ext == ".ptx" || ext == ".cubin") {
      const std::string stem = e.path().stem().string();
      if (o.kernel.empty() || stem.find(o.kernel) != std::string::npos) kernels[stem].insert(ext);
    }
  }
  if (kernels.empty()) {
    std::fprintf(stderr,
                 "ctile inspect: no kernel dumps%s in %s. Every run dumps the tile IR (CTILE_DUMP_IR); CUDA source and "
                 "PTX are dumped when kernels are compiled for a GPU (CTILE_DUMP_CUDA, CTILE_DUMP_PTX); "
                 "`ctile inspect -- PROG ARGS` sets them all.\n",
                 o.kernel.empty() ? "" : (" matching '" + o.kernel + "'").c_str(), dir.c_str());
    return program_status != 0 ? program_status : 1;
  }
  const bool any = o.ir || o.cuda || o.ptx || o.sass;
  if (!any) {
    std::printf("%s: %zu kernel%s\n", dir.c_str(), kernels.size(), kernels.size() == 1 ? "" : "s");
    for (const auto& [k, exts] : kernels) {
      std::string have;
      for (const char* x : {".ir", ".cu", ".ptx", ".cubin"})
        if (exts.count(x)) have += std::string(have.empty() ? "" : ", ") + (std::string(x) == ".cu" ? "cuda" : x + 1);
      std::printf("  %-48s %s\n", k.c_str(), have.c_str());
    }
    std::printf("show them with --ir, --cuda, --ptx, --sass (and --kernel NAME)\n");
    return program_status;
  }
  int status = program_status;
  auto show = [&](const std::string& k, const char* ext, const char* what) {
    const fs::path p = fs::path(dir) / (k + ext);
    if (!fs::exists(p)) return;
    std::printf("==== %s of %s (%s) ====\n%s\n", what, k.c_str(), p.string().c_str(), read(p).c_str());
  };
  for (const auto& [k, exts] : kernels) {
    if (o.ir) show(k, ".ir", "tile IR");
    if (o.cuda) show(k, ".cu", "CUDA source");
    if (o.ptx) show(k, ".ptx", "PTX");
    if (o.sass && (exts.count(".cubin") || exts.count(".ptx"))) {
      std::string why;
      const fs::path cubin = exts.count(".cubin") ? fs::path(dir) / (k + ".cubin") : fs::path();
      const std::string sass = sass_of(cubin, fs::path(dir) / (k + ".ptx"), why);
      if (sass.empty()) {
        std::fprintf(stderr, "ctile inspect: no SASS for %s: %s\n", k.c_str(), why.c_str());
        status = status ? status : 1;
      } else {
        std::printf("==== SASS of %s ====\n%s\n", k.c_str(), sass.c_str());
      }
    }
  }
  return status;
}

}  // namespace ctile::tool
