// The op registry: every fact about an op kind that more than one part of ctile needs, in one table
// (name, effects, whether it moves data between the threads that run a tile block, regions), and the
// one type rule of each op. The tracing front end builds ops through the type rule (Builder::build),
// the verifier checks every op with it, and the passes ask the traits whether an op may be removed,
// moved or merged. Adding an op means: an OpKind, a row in the table (op_info.cpp), its type rule,
// its interpreter semantics, and its lowering; docs/compiler.md says how.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ctile/ir/ir.hpp"

namespace ctile::ir {

// What an op does besides computing its results.
enum class Effect : std::uint8_t {
  None,         // pure: its results depend only on its operands; unused results make it removable
  ReadMemory,   // reads global memory through operand 0 (a tensor, partition or piece)
  WriteMemory,  // writes global memory through operand 0 (it may also return old values)
  Control,      // structured control flow: effects of the ops in its regions (and ct.for may trap)
  Terminator,   // ct.yield
};

struct OpTraits {
  const char* name;      // "ct.load", ...
  Effect effect;
  // A result element may depend on operand elements held by other threads of the tile block
  // (broadcast, permute, reductions, scans, mma, ...). On a parallel target such an op needs an
  // exchange between threads (shuffles or shared memory); element-wise ops never do.
  bool crosses_threads;
  int regions;           // number of regions (0 for all but the control-flow ops)
  // The result type is given by the op (constant, iota, reshape, ...), not derived from its
  // operands: the type rule checks the declared type instead of computing it.
  bool declared_result;
  // Its regions use no value defined outside them (a combine function): passes must not make them
  // (CSE must not merge an op inside with one outside; nothing is hoisted into or out of them).
  bool isolated = false;
};

const OpTraits& traits(OpKind k);

// True when removing `op` (if its results are unused) or moving it changes nothing observable
// besides its results: pure ops and loads. Stores, atomics, control flow and yields are kept.
bool removable_if_unused(const Op& op);
// Pure (no memory access at all): may be merged with an identical op (CSE) and hoisted.
bool is_pure(const Op& op);
// A load of one tile from a partition or a piece: the loads smem-alloc may stage in a ring of
// shared memory (copied by cp.async or TMA) for a tensor-core product.
inline bool is_tile_copy(const Op& op) { return op.kind == OpKind::Load || op.kind == OpKind::LoadPiece; }
// Reads memory a store of this kernel may change: its own piece, an atomic or unchecked tensor.
// Loads of read-only inputs see memory nothing changes while the kernel runs.
bool reads_mutable_memory(const Kernel& k, const Op& op);

// The type rule of an op. Returns the result types of `op` from its operand types and attributes;
// for ops with declared_result, `declared` holds the wanted result types, which the rule checks.
// Control flow (for/if/while) gets its carried types checked here; its regions are checked by the
// verifier. Throws TypeError with a message that names what is wrong (never the op or its
// location: callers add those).
class TypeError : public Error {
 public:
  using Error::Error;
};
std::vector<Type> infer_types(const Kernel& k, const Op& op, std::span<const Type> declared);

// Ops a combine region (ct.reduce_with, ct.scan_with) may hold besides its yield: the element-wise
// ops and constants, on scalars.
bool combinable(OpKind k);

// Which ops take a rounding attribute, and which roundings they accept (docs/ir.md, "Numerics").
bool takes_rounding(const Op& op);
bool rounding_allowed(const Op& op, Rounding r);
Rounding default_rounding(const Op& op);
// min/max (binary and reduce) on floats take a NaN policy.
bool takes_nan_policy(const Op& op);

// A unary or binary op that is a function call rather than a few instructions: every unary
// function but neg, abs and not (exp, log, sqrt, ...), and div, rem, pow and atan2. The remat pass
// never computes these again; the CUDA emitter evaluates a select over a fused one unconditionally.
bool calls_function(const Op& op);

}  // namespace ctile::ir
