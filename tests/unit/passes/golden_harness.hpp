// The golden-file harness of the pass tests. A case file holds
//
//   // passes: canonicalize, dce        (the pipeline, in order)
//   // options: fast_math, warps=4      (optional: KernelOptions; also simt_mma, stages=, blocks_per_cta=, min_ctas_per_sm=,
//                                       tma=, warp_specialize=, pingpong=, epilogue_overlap=, ring_slots=, acc_split=)
//   // sm: 90                           (optional: the target)
//   <input IR>
//   // expect:
//   <expected IR>
//
// and passes when print(passes(parse(input))) equals the expected text.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ctile/passes/pass.hpp"

namespace pass_golden {

namespace ir = ctile::ir;

struct Case {
  std::vector<std::string> passes;
  ctile::passes::PassContext ctx;
  std::string input, expected;
  std::string head;  // everything up to and including the "// expect:" line
};

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) r.push_back(item);
  }
  return r;
}

inline Case parse_case(const std::string& text) {
  Case c;
  const std::string marker = "// expect:";
  const auto m = text.find(marker);
  if (m == std::string::npos) throw std::runtime_error("no '// expect:' line");
  const auto eol = text.find('\n', m);
  c.head = text.substr(0, eol == std::string::npos ? text.size() : eol + 1);
  c.input = text.substr(0, m);
  c.expected = eol == std::string::npos ? "" : text.substr(eol + 1);
  std::stringstream in(c.input);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("// passes:", 0) == 0) c.passes = split_list(line.substr(10));
    if (line.rfind("// sm:", 0) == 0) c.ctx.sm = std::stoi(line.substr(6));
    if (line.rfind("// options:", 0) == 0)
      for (const std::string& o : split_list(line.substr(11))) {
        if (o == "fast_math") c.ctx.options.fast_math = true;
        else if (o == "simt_mma") c.ctx.options.simt_mma = true;
        else if (o == "sync_mma") c.ctx.options.sync_mma = true;
        else if (o.rfind("warps=", 0) == 0) c.ctx.options.warps = std::stoi(o.substr(6));
        else if (o.rfind("stages=", 0) == 0) c.ctx.options.stages = std::stoi(o.substr(7));
        else if (o.rfind("loop_prefetch=", 0) == 0) c.ctx.options.loop_prefetch = std::stoi(o.substr(14));
        else if (o.rfind("blocks_per_cta=", 0) == 0) c.ctx.options.blocks_per_cta = std::stoi(o.substr(15));
        else if (o.rfind("tma=", 0) == 0) c.ctx.options.tma = std::stoi(o.substr(4));
        else if (o.rfind("warp_specialize=", 0) == 0) c.ctx.options.warp_specialize = std::stoi(o.substr(16));
        else if (o.rfind("pingpong=", 0) == 0) c.ctx.options.pingpong = std::stoi(o.substr(9));
        else if (o.rfind("epilogue_overlap=", 0) == 0) c.ctx.options.epilogue_overlap = std::stoi(o.substr(17));
        else if (o.rfind("acc_split=", 0) == 0) c.ctx.options.acc_split = std::stoi(o.substr(10));
        else if (o.rfind("ring_slots=", 0) == 0) c.ctx.options.ring_slots = std::stoi(o.substr(11));
        else if (o.rfind("min_ctas_per_sm=", 0) == 0) c.ctx.options.min_ctas_per_sm = std::stoi(o.substr(16));
        else throw std::runtime_error("unknown option " + o);
      }
  }
  if (c.passes.empty()) throw std::runtime_error("no '// passes:' line");
  return c;
}

// Runs the case; returns the printed result.
inline std::string run_case(const Case& c) {
  ir::Kernel k = ir::parse(c.input);
  ctile::passes::PassManager pm;
  for (const std::string& p : c.passes) pm.add(p);
  pm.run(k, c.ctx);
  return ir::print(k);
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace pass_golden
