// Compile stage timings (CTILE_TIMINGS=1). A backend notes each stage of a compile on the compiling
// thread; launch.cpp collects them around Backend::compile and prints one line per specialisation
// with the trace time. Private to the library.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace ctile::detail {

// Stages noted on this thread since the last take_stage_timings().
inline thread_local std::vector<std::pair<std::string, double>> t_stage_timings;

inline void note_stage(std::string name, double ms) { t_stage_timings.emplace_back(std::move(name), ms); }

inline std::vector<std::pair<std::string, double>> take_stage_timings() {
  std::vector<std::pair<std::string, double>> out;
  out.swap(t_stage_timings);
  return out;
}

// Milliseconds since `t0`.
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace ctile::detail
