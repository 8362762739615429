// KernelInfo: what CTILE_SIMT_KERNEL's texts say about a kernel (parameter names, requires
// relations), and Dims / validate_launch / limits_of (contract.hpp).
#include <algorithm>
#include <cctype>
#include <limits>
#include <thread>

#include "ctile/core/error.hpp"
#include "ctile/simt/contract.hpp"
#include "ctile/simt/kernel.hpp"
#include "gpu.hpp"

namespace ctile::simt {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// "(a, f(b, c), d<x, y> e)" -> {"a", "f(b, c)", "d<x, y> e"}: splits at commas outside brackets.
std::vector<std::string> split_top(const std::string& text) {
  std::string t = trim(text);
  if (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : t) {
    if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

// A requires relation may contain comparisons (a < b): split without counting < and > as brackets.
std::vector<std::string> split_relations(const std::string& text) {
  std::string t = trim(text);
  if (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : t) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

std::string last_identifier(const std::string& decl) {
  std::size_t e = decl.size();
  while (e > 0 && !(std::isalnum(static_cast<unsigned char>(decl[e - 1])) || decl[e - 1] == '_')) --e;
  std::size_t b = e;
  while (b > 0 && (std::isalnum(static_cast<unsigned char>(decl[b - 1])) || decl[b - 1] == '_')) --b;
  return decl.substr(b, e - b);
}

}  // namespace

std::string Dims::str() const {
  return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
}

namespace detail {

std::string KernelInfo::describe() const {
  return "SIMT kernel '" + name + "' (" + file + ":" + std::to_string(line) + ")";
}

void finish_kernel_info(KernelInfo& k) {
  const std::vector<std::string> decls = split_top(k.params_text);
  for (std::size_t i = 0; i < k.params.size(); ++i)
    k.params[i].name = i < decls.size() ? last_identifier(decls[i]) : "arg" + std::to_string(i);
  k.relations = split_relations(k.requires_text);
  if (k.relations.size() > 31)
    throw UserError(k.describe() + ": at most 31 requires relations, got " + std::to_string(k.relations.size()));
}

}  // namespace detail

namespace {

// a * b, false on overflow (both >= 0).
bool mul(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

}  // namespace

LaunchDims validate_launch(const std::string& what, const Contract& c, const DeviceLimits& lim, const GridSpec& g) {
  auto fail = [&](const std::string& msg) -> void { throw UserError(what + ": " + msg); };
  if (!c.has_block()) fail("the launch contract declares no block shape; give it with Contract().block(x, y, z)");
  const Dims b = c.block_dims();
  const char* axis[] = {"x", "y", "z"};
  const std::int64_t bv[] = {b.x, b.y, b.z};
  const std::int64_t bmax[] = {lim.max_block.x, lim.max_block.y, lim.max_block.z};
  for (int i = 0; i < 3; ++i) {
    if (bv[i] < 1) fail("the contract's block " + b.str() + " has extent " + std::to_string(bv[i]) + " along " + axis[i] + "; every extent must be at least 1");
    if (bv[i] > bmax[i])
      fail("the contract's block " + b.str() + " has " + std::to_string(bv[i]) + " threads along " + axis[i] + "; " +
           lim.device + " allows at most " + std::to_string(bmax[i]));
  }
  std::int64_t tpb = 0;
  if (!mul(b.x, b.y, tpb) || !mul(tpb, b.z, tpb) || tpb > lim.max_threads_per_block)
    fail("the contract's block " + b.str() + " has " + (tpb > 0 ? std::to_string(tpb) : std::string("too many")) +
         " threads; " + lim.device + " allows at most " + std::to_string(lim.max_threads_per_block) + " per block");

  Dims grid;
  std::int64_t gv[3] = {g.extent.x, g.extent.y, g.extent.z};
  for (int i = 0; i < 3; ++i) {
    if (gv[i] < 0)
      fail(std::string(g.kind == GridSpec::Kind::Cover ? "cover(" : "grid(") + std::to_string(g.extent.x) + ", " +
           std::to_string(g.extent.y) + ", " + std::to_string(g.extent.z) + ") has a negative extent along " + axis[i]);
    if (g.kind == GridSpec::Kind::Cover) gv[i] = gv[i] / bv[i] + (gv[i] % bv[i] != 0);  // no overflow: bv >= 1
  }
  grid = Dims{gv[0], gv[1], gv[2]};
  const std::int64_t gmax[] = {lim.max_grid.x, lim.max_grid.y, lim.max_grid.z};
  for (int i = 0; i < 3; ++i) {
    if (gv[i] == 0)
      fail("the grid " + grid.str() + " is empty (no blocks along " + axis[i] +
           (g.kind == GridSpec::Kind::Cover ? ": it covers 0 threads there" : "") + "); there is nothing to launch");
    if (gv[i] > gmax[i])
      fail("the grid " + grid.str() + " has " + std::to_string(gv[i]) + " blocks along " + axis[i] + "; " + lim.device +
           " allows at most " + std::to_string(gmax[i]) + (g.kind == GridSpec::Kind::Cover ? " (use grid_stride with a smaller grid)" : ""));
  }
  std::int64_t threads = 0;
  if (!mul(gv[0], gv[1], threads) || !mul(threads, gv[2], threads) || !mul(threads, tpb, threads))
    fail("the grid " + grid.str() + " of blocks " + b.str() + " has more threads than a 64-bit index can count");
  const std::int64_t smem = c.dynamic_shared_bytes();
  if (smem < 0) fail("the contract's dynamic shared memory (" + std::to_string(smem) + " bytes) is negative");
  if (smem > lim.max_shared_per_block_optin)
    fail("the contract asks for " + std::to_string(smem) + " bytes of dynamic shared memory per block; " + lim.device +
         " has at most " + std::to_string(lim.max_shared_per_block_optin));
  if (c.min_cc() > lim.compute_capability)
    fail("the contract needs compute capability " + std::to_string(c.min_cc() / 10) + "." + std::to_string(c.min_cc() % 10) +
         " or newer; " + lim.device + " has " + std::to_string(lim.compute_capability / 10) + "." +
         std::to_string(lim.compute_capability % 10));
  if (c.min_blocks() < 0) fail("the contract's min_blocks_per_sm (" + std::to_string(c.min_blocks()) + ") is negative");
  LaunchDims d;
  d.grid = grid;
  d.block = b;
  d.dynamic_shared = smem;
  d.threads = threads;
  return d;
}

DeviceLimits limits_of(Device d) {
  if (d.kind == DeviceKind::Cpu) {
    DeviceLimits l;
    l.device = d.str() + " (the CPU backend, with an sm_90 GPU's limits)";
    l.multiprocessors = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return l;
  }
  return gpu::limits(d.index);
}

}  // namespace ctile::simt
