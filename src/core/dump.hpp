// Generated code dumps (CTILE_DUMP_CUDA / CTILE_DUMP_PTX, CTILE_DUMP_DIR) and the on/off environment
// switches they go with, shared by every layer that generates code: the tile backend
// (backend/cuda), compile_only (runtime) and the SIMT / raw kernels (simt). Internal to the library.
#pragma once

#include <string>

namespace ctile::detail {

// An on/off environment switch: set, not empty and not "0".
[[nodiscard]] bool env_flag(const char* name);

// Writes generated text (ext ".cu" or ".ptx") of `what` (e.g. "kernel 'vector_add'") either to
// CTILE_DUMP_DIR/<entry><ext>, which `ctile inspect` reads (a notice on stderr unless CTILE_QUIET),
// or, without a directory, to stderr between "// ---- ctile: <kind> of <what> (entry <entry>) ----"
// and "// ---- end of <entry> ----". Thread-safe: concurrent dumps do not interleave.
void dump_generated(const std::string& what, const std::string& entry, const char* ext, const std::string& text);

}  // namespace ctile::detail
