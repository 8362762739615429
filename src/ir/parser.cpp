// The parser of the IR's printed form (printer.cpp): golden tests of the passes start from text,
// and a dump can be read back. The grammar is the printer's, line by line:
//
//   #d0 = #dist<reg=[0,1], lane=[2,3,4,5,6], warp=[*,*]>                       (GPU level only)
//   ct.kernel @name grid_rank N [target {sm = 90, ...}] (%0: type "name" [arg I] [facts], ...) {
//     %r, ... = ct.op %a, ... [{attr = value, ...}] [: type, ...] [loc("file":line)]
//       region(%a: type, ...) {
//         ...
//       }
//     ct.yield
//   }
//
// Values may be numbered in any order; they get fresh ids in order of definition.
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "ctile/ir/ir.hpp"
#include "ctile/ir/op_info.hpp"

namespace ctile::ir {
namespace {

using detail::cat;

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Kernel run() {
    skip_space();
    while (peek() == '#') parse_alias();
    expect_word("ct.kernel");
    expect('@');
    parse_name();
    expect_word("grid_rank");
    k_.grid_rank = static_cast<int>(parse_int());
    skip_space();
    if (try_word("options")) parse_options();
    skip_space();
    if (try_word("target")) parse_target();
    expect('(');
    if (!try_char(')')) {
      do parse_param();
      while (try_char(','));
      expect(')');
    }
    expect('{');
    for (const Param& p : k_.params) k_.body.args.push_back(p.value);
    parse_region_ops(k_.body);
    skip_space();
    if (pos_ != s_.size()) fail("text after the kernel's closing brace");
    if (gpu_) k_.layouts.resize(k_.values.size());
    try {
      verify(k_);
    } catch (const InternalError& e) {
      throw UserError(cat("parsed IR does not verify: ", e.what()));
    }
    return std::move(k_);
  }

 private:
  // ---- characters ----
  [[noreturn]] void fail(const std::string& msg) const {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw UserError(cat("IR text, line ", line, ", column ", col, ": ", msg));
  }
  void skip_space() {
    while (pos_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_.compare(pos_, 2, "//") == 0) {  // comments (golden files may carry them)
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  char peek() {
    skip_space();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool try_char(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!try_char(c)) fail(cat("expected '", c, "'"));
  }
  static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
  std::string word() {
    skip_space();
    const std::size_t b = pos_;
    while (pos_ < s_.size() && word_char(s_[pos_])) ++pos_;
    return s_.substr(b, pos_ - b);
  }
  bool try_word(const std::string& w) {
    skip_space();
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    const std::size_t e = pos_ + w.size();
    if (e < s_.size() && word_char(s_[e])) return false;
    pos_ = e;
    return true;
  }
  void expect_word(const std::string& w) {
    if (!try_word(w)) fail(cat("expected '", w, "'"));
  }
  std::int64_t parse_int() {
    skip_space();
    std::int64_t v = 0;
    auto r = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v);
    if (r.ec != std::errc()) fail("expected an integer");
    pos_ = static_cast<std::size_t>(r.ptr - s_.data());
    return v;
  }
  std::string parse_string() {
    expect('"');
    std::string r;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      r += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return r;
  }
  void parse_name() {
    const std::size_t e = s_.find(" grid_rank ", pos_);
    if (e == std::string::npos) fail("expected the kernel name followed by 'grid_rank'");
    k_.name = s_.substr(pos_, e - pos_);
    pos_ = e;
  }
  Shape parse_list() {  // [1, 2, 3]
    expect('[');
    Shape r;
    if (try_char(']')) return r;
    do r.push_back(parse_int());
    while (try_char(','));
    expect(']');
    return r;
  }

  // ---- layouts ----
  std::vector<int> parse_bits() {
    expect('[');
    std::vector<int> r;
    if (try_char(']')) return r;
    do {
      if (try_char('*')) r.push_back(Layout::kCopy);
      else r.push_back(static_cast<int>(parse_int()));
    } while (try_char(','));
    expect(']');
    return r;
  }
  Layout parse_layout() {
    expect('#');
    Layout l;
    if (try_word("dist")) {
      l.kind = LayoutKind::Dist;
      expect('<');
      expect_word("reg");
      expect('=');
      l.reg = parse_bits();
      expect(',');
      expect_word("lane");
      expect('=');
      l.lane = parse_bits();
      expect(',');
      expect_word("warp");
      expect('=');
      l.warp = parse_bits();
      expect('>');
    } else if (try_word("shared")) {
      l.kind = LayoutKind::Shared;
      expect('<');
      if (!try_char('>')) {
        expect_word("row");
        expect('=');
        l.row = parse_int();
        expect(',');
        if (try_word("swizzle")) {
          expect('=');
          l.swizzle = static_cast<int>(parse_int());
          if (l.swizzle != 32 && l.swizzle != 64 && l.swizzle != 128) fail("swizzle takes 32, 64 or 128 (bytes)");
          if (try_char(',')) {
            expect_word("trans");
            l.trans = true;
          }
        } else {
          expect_word("pad");
          expect('=');
          l.pad = parse_int();
        }
        expect('>');
      }
    } else {
      fail("expected a layout (#dist<...> or #shared<...>)");
    }
    return l;
  }
  void parse_alias() {
    expect('#');
    const std::string name = word();
    expect('=');
    aliases_[name] = parse_layout();
    gpu_ = true;
  }
  Layout layout_ref() {
    expect('#');
    const std::string name = word();
    auto it = aliases_.find(name);
    if (it == aliases_.end()) fail(cat("unknown layout #", name));
    return it->second;
  }

  // ---- types ----
  DType parse_dtype() {
    const std::string w = word();
    for (int i = 0; i < kNumDTypes; ++i)
      if (w == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
    fail(cat("unknown element type '", w, "'"));
  }
  Access parse_access() {
    const std::string w = word();
    if (w == "read") return Access::Read;
    if (w == "piece") return Access::Piece;
    if (w == "atomic") return Access::Atomic;
    if (w == "unchecked") return Access::Unchecked;
    fail(cat("unknown access '", w, "'"));
  }
  // A type, and the layout it carries in the GPU-level IR.
  Type parse_type(Layout* layout) {
    skip_space();
    if (try_word("tile")) {
      expect('<');
      const DType d = parse_dtype();
      expect(',');
      Shape sh = parse_list();
      if (try_char(',')) {
        const Layout l = layout_ref();
        if (layout) *layout = l;
      }
      expect('>');
      return Type::tile(d, std::move(sh));
    }
    if (try_word("tensor")) {
      expect('<');
      const DType d = parse_dtype();
      expect(',');
      expect_word("rank");
      const int r = static_cast<int>(parse_int());
      expect(',');
      const Access a = parse_access();
      expect('>');
      return Type::tensor(d, r, a);
    }
    if (try_word("partition")) {
      expect('<');
      const DType d = parse_dtype();
      expect(',');
      expect_word("rank");
      const int r = static_cast<int>(parse_int());
      expect(',');
      expect_word("tile");
      Shape sh = parse_list();
      expect('>');
      return Type::partition(d, r, std::move(sh));
    }
    if (try_word("piece")) {
      expect('<');
      const DType d = parse_dtype();
      expect(',');
      Shape sh = parse_list();
      expect('>');
      return Type::piece(d, std::move(sh));
    }
    return Type::scalar(parse_dtype());
  }

  // ---- values ----
  ValueId define(const std::string& text_name, const Type& t, const Layout& l) {
    if (names_.count(text_name)) fail(cat("value ", text_name, " is defined twice"));
    k_.values.push_back(t);
    layouts_.push_back(l);
    const auto v = static_cast<ValueId>(k_.values.size() - 1);
    names_[text_name] = v;
    if (gpu_) {
      k_.layouts.resize(k_.values.size());
      k_.layouts.back() = l;
    }
    return v;
  }
  std::string value_name() {
    expect('%');
    const std::string w = word();
    if (w.empty()) fail("expected a value name after '%'");
    return "%" + w;
  }
  ValueId use() {
    const std::string n = value_name();
    auto it = names_.find(n);
    if (it == names_.end()) fail(cat("value ", n, " is used before it is defined"));
    return it->second;
  }

  // ---- kernel header ----
  void parse_target() {
    expect('{');
    KernelTarget& t = k_.target;
    do {
      const std::string key = word();
      if (key == "persistent") {
        t.persistent = true;
        continue;
      }
      if (key == "pingpong") {
        t.pingpong = true;
        continue;
      }
      if (key == "scratch_over_rings") {
        t.scratch_over_rings = true;
        continue;
      }
      expect('=');
      const std::int64_t v = parse_int();
      if (key == "sm") t.sm = static_cast<int>(v);
      else if (key == "warps") t.warps = static_cast<int>(v);
      else if (key == "blocks_per_cta") t.blocks_per_cta = static_cast<int>(v);
      else if (key == "smem") t.smem_bytes = v;
      else if (key == "group_rows") t.group_rows = static_cast<int>(v);
      else if (key == "min_ctas") t.min_ctas = static_cast<int>(v);
      else if (key == "producer_warps") t.producer_warps = static_cast<int>(v);
      else if (key == "producer_bar") t.producer_bar = v;
      else if (key == "k_split") t.k_split = static_cast<int>(v);
      else if (key == "k_split_scratch") t.k_split_scratch = v;
      else fail(cat("unknown target attribute '", key, "'"));
    } while (try_char(','));
    expect('}');
    gpu_ = true;
  }
  void parse_options() {
    expect('{');
    KernelOptions& o = k_.options;
    do {
      const std::string key = word();
      if (key == "fast_math") {
        o.fast_math = true;
        continue;
      }
      if (key == "simt_mma") {
        o.simt_mma = true;
        continue;
      }
      if (key == "sync_mma") {
        o.sync_mma = true;
        continue;
      }
      expect('=');
      const int v = static_cast<int>(parse_int());
      if (key == "warps") o.warps = v;
      else if (key == "stages") o.stages = v;
      else if (key == "blocks_per_cta") o.blocks_per_cta = v;
      else if (key == "loop_prefetch") o.loop_prefetch = v;
      else if (key == "min_ctas_per_sm") o.min_ctas_per_sm = v;
      else if (key == "tma") o.tma = v;
      else if (key == "warp_specialize") o.warp_specialize = v;
      else if (key == "pingpong") o.pingpong = v;
      else if (key == "epilogue_overlap") o.epilogue_overlap = v;
      else if (key == "ring_slots") o.ring_slots = v;
      else if (key == "acc_split") o.acc_split = v;
      else fail(cat("unknown kernel option '", key, "'"));
    } while (try_char(','));
    expect('}');
  }
  std::uint32_t parse_axes() {
    std::uint32_t bits = 0;
    for (std::int64_t a : parse_list()) {
      if (a < 0 || a >= 32) fail("axis out of range");
      bits |= std::uint32_t{1} << a;
    }
    return bits;
  }
  void parse_param() {
    Param p;
    const std::string n = value_name();
    expect(':');
    Layout l;
    p.type = parse_type(&l);
    p.name = parse_string();
    p.arg_index = static_cast<int>(k_.params.size());
    if (try_word("arg")) p.arg_index = static_cast<int>(parse_int());
    if (try_char('{')) {
      do {
        const std::string f = word();
        if (f == "align16") {
          p.facts.aligned16 = true;
        } else if (f == "contig") {
          p.facts.contiguous_last = true;
        } else if (f == "small") {
          p.facts.small = true;
        } else if (f == "div16") {
          expect('=');
          p.facts.extent_div16 = parse_axes();
          p.facts.extent_div8 = static_cast<std::uint8_t>(p.facts.extent_div8 | p.facts.extent_div16);  // div16 implies div8
        } else if (f == "div8") {
          expect('=');
          p.facts.extent_div8 = static_cast<std::uint8_t>(p.facts.extent_div8 | parse_axes());
        } else if (f == "stride16") {
          expect('=');
          p.facts.stride_div16 = parse_axes();
          p.facts.stride_div8 = static_cast<std::uint8_t>(p.facts.stride_div8 | p.facts.stride_div16);  // stride16 implies stride8
        } else if (f == "stride8") {
          expect('=');
          p.facts.stride_div8 = static_cast<std::uint8_t>(p.facts.stride_div8 | parse_axes());
        } else {
          fail(cat("unknown tensor fact '", f, "'"));
        }
      } while (try_char(','));
      expect('}');
    }
    p.value = define(n, p.type, l);
    k_.params.push_back(std::move(p));
  }

  // ---- ops ----
  OpKind op_kind(const std::string& w) {
    for (int i = 0; i <= static_cast<int>(OpKind::Yield); ++i)
      if (w == op_name(static_cast<OpKind>(i))) return static_cast<OpKind>(i);
    fail(cat("unknown op '", w, "'"));
  }
  template <class E, std::size_t N>
  E enum_of(const std::string& w, const char* (*name)(E), const char* what) {
    for (std::size_t i = 0; i < N; ++i)
      if (w == name(static_cast<E>(i))) return static_cast<E>(i);
    fail(cat("unknown ", what, " '", w, "'"));
  }
  // A constant as printed by scalar_str (the dtype comes later, with the result type: keep text).
  std::string scalar_text() {
    skip_space();
    const std::size_t b = pos_;
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
      ++pos_;
    if (pos_ == b) fail("expected a constant");
    return s_.substr(b, pos_ - b);
  }
  Scalar scalar_of(const std::string& t, DType d) {
    if (is_bool(d)) {
      if (t == "true") return Scalar::of_int(1);
      if (t == "false") return Scalar::of_int(0);
      fail(cat("'", t, "' is not a bool constant"));
    }
    if (is_float(d)) {
      if (t == "nan" || t == "-nan") return Scalar::of_float(std::numeric_limits<double>::quiet_NaN());
      if (t == "inf") return Scalar::of_float(INFINITY);
      if (t == "-inf") return Scalar::of_float(-INFINITY);
      double v = 0;
      auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      if (r.ec != std::errc() || r.ptr != t.data() + t.size()) fail(cat("'", t, "' is not a float constant"));
      return Scalar::of_float(v);
    }
    if (d == DType::u64) {
      std::uint64_t v = 0;
      auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      if (r.ec != std::errc() || r.ptr != t.data() + t.size()) fail(cat("'", t, "' is not an unsigned constant"));
      return Scalar::of_int(static_cast<std::int64_t>(v));
    }
    std::int64_t v = 0;
    auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size()) fail(cat("'", t, "' is not an integer constant"));
    return Scalar::of_int(v);
  }

  void parse_attrs(Op& op, std::string& scalar) {
    if (!try_char('{')) return;
    do {
      const std::string key = word();
      if (key == "ftz") { op.ftz = true; continue; }
      if (key == "propagate_nan") { op.propagate_nan = true; continue; }
      if (key == "in_bounds") { op.in_bounds = true; continue; }
      if (key == "sync_after") { op.sync_after = true; continue; }
      if (key == "grid_indices") { op.grid_indices = true; continue; }
      if (key == "tensor_core") { op.tensor_core = true; continue; }
      if (key == "in_flight") { op.in_flight = true; continue; }
      if (key == "prefetch_next") { op.prefetch_next = true; continue; }
      if (key == "remat") { op.remat = true; continue; }
      if (key == "fused") { op.fused = true; continue; }
      if (key == "exclusive") { op.exclusive = true; continue; }
      if (key == "reverse") { op.reverse = true; continue; }
      expect('=');
      if (key == "axis") op.axis = static_cast<int>(parse_int());
      else if (key == "floor") op.value = Scalar::of_int(parse_int());
      else if (key == "tile") op.shape = parse_list();
      else if (key == "offsets") op.offsets = parse_list();
      else if (key == "perm") {
        for (std::int64_t p : parse_list()) op.perm.push_back(static_cast<int>(p));
      } else if (key == "pad" || key == "value") scalar = scalar_text();
      else if (key == "fn") {
        const std::string w = word();
        if (op.kind == OpKind::Unary) op.unary = enum_of<UnaryFn, kUnaryFns>(w, unary_name, "unary function");
        else op.binary = enum_of<BinaryFn, kBinaryFns>(w, binary_name, "binary function");
      } else if (key == "pred") op.cmp = enum_of<CmpPred, 6>(word(), cmp_name, "predicate");
      else if (key == "kind") {
        const std::string w = word();
        if (op.kind == OpKind::Reduce || op.kind == OpKind::Scan) op.reduce = enum_of<ReduceKind, 6>(w, reduce_name, "reduction");
        else op.atomic = enum_of<AtomicKind, 4>(w, atomic_name, "atomic kind");
      } else if (key == "dist") op.random = enum_of<RandomDist, 3>(word(), random_name, "distribution");
      else if (key == "rounding") op.rounding = enum_of<Rounding, 4>(word(), rounding_name, "rounding");
      else if (key == "smem") {
        const Shape v = parse_list();
        if (v.size() != 2) fail("smem takes [offset, bytes]");
        op.smem_offset = v[0];
        op.smem_bytes = v[1];
      } else if (key == "ring") {
        // ring = [slots, slot] or [slots, +ahead] (a load inside a loop: slot (iteration + ahead) % slots)
        expect('[');
        op.ring_slots = static_cast<int>(parse_int());
        expect(',');
        skip_space();
        if (try_char('+')) op.ring_ahead = static_cast<int>(parse_int());
        else op.ring_slot = static_cast<int>(parse_int());
        expect(']');
        if (op.ring_slots <= 0 || op.ring_slot >= op.ring_slots || op.ring_ahead < 0) fail("ring takes [slots > 0, slot < slots] or [slots, +ahead]");
      } else if (key == "tma") {
        // tma = [map, barrier offset]: the load copies with TMA (smem-alloc)
        const Shape v = parse_list();
        if (v.size() != 2 || v[0] < 0 || v[1] < 0 || v[1] % 8 != 0)
          fail("tma takes [map >= 0, barrier offset >= 0, a multiple of 8]");
        op.tma_map = static_cast<int>(v[0]);
        op.tma_bar = v[1];
      } else if (key == "acc_split") {
        op.acc_split = static_cast<int>(parse_int());
        if (op.acc_split != 2) fail("acc_split takes 2 (two accumulators)");
      } else if (key == "async_wait") {
        op.async_wait = static_cast<int>(parse_int());
        if (op.async_wait < 0) fail("async_wait must not be negative");
      } else fail(cat("unknown attribute '", key, "'"));
    } while (try_char(','));
    expect('}');
  }

  void parse_region_ops(Region& r) {
    while (true) {
      skip_space();
      if (try_char('}')) return;
      if (pos_ >= s_.size()) fail("unexpected end of text inside a region");
      parse_op(r);
    }
  }

  void parse_op(Region& r) {
    std::vector<std::string> result_names;
    if (peek() == '%') {
      do result_names.push_back(value_name());
      while (try_char(','));
      expect('=');
    }
    auto op = std::make_unique<Op>();
    op->kind = op_kind(word());
    // Operands run up to an attribute list, a colon, a region or the end of the line.
    skip_space_in_line();
    while (pos_ < s_.size() && s_[pos_] == '%') {
      op->operands.push_back(use());
      skip_space_in_line();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        skip_space_in_line();
      }
    }
    std::string scalar;
    skip_space_in_line();
    if (pos_ < s_.size() && s_[pos_] == '{') parse_attrs(*op, scalar);
    std::vector<Type> types;
    std::vector<Layout> layouts;
    skip_space_in_line();
    if (pos_ < s_.size() && s_[pos_] == ':') {
      ++pos_;
      do {
        Layout l;
        types.push_back(parse_type(&l));
        layouts.push_back(l);
        skip_space_in_line();
      } while (pos_ < s_.size() && s_[pos_] == ',' && ++pos_);
    }
    skip_space_in_line();
    if (s_.compare(pos_, 4, "loc(") == 0) {
      pos_ += 4;
      const std::string file = parse_string();
      expect(':');
      const auto line = static_cast<unsigned>(parse_int());
      expect(')');
      op->loc = SourceLoc(file, line);
    }
    if (types.size() != result_names.size())
      fail(cat(op_name(op->kind), ": ", result_names.size(), " results but ", types.size(), " result types"));
    if (!scalar.empty()) {
      const DType d = !types.empty() ? types[0].dtype : DType::f32;
      op->value = scalar_cast(scalar_of(scalar, d), d);
    }
    const int nreg = traits(op->kind).regions;
    // Region arguments are defined before the results (the printer numbers them after): define the
    // results first only when the op has no regions, so ids stay in order of definition.
    std::vector<ValueId> results;
    for (int i = 0; i < nreg; ++i) {
      op->regions.emplace_back();
      Region& sub = op->regions.back();
      expect_word("region");
      expect('(');
      if (!try_char(')')) {
        do {
          const std::string n = value_name();
          expect(':');
          Layout l;
          const Type t = parse_type(&l);
          sub.args.push_back(define(n, t, l));
        } while (try_char(','));
        expect(')');
      }
      expect('{');
      parse_region_ops(sub);
    }
    for (std::size_t i = 0; i < result_names.size(); ++i) results.push_back(define(result_names[i], types[i], layouts[i]));
    op->results = std::move(results);
    r.ops.push_back(std::move(op));
  }
  void skip_space_in_line() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }

  const std::string& s_;
  std::size_t pos_ = 0;
  Kernel k_;
  bool gpu_ = false;
  std::map<std::string, Layout> aliases_;
  std::map<std::string, ValueId> names_;
  std::vector<Layout> layouts_;
};

}  // namespace

Kernel parse(const std::string& text) { return Parser(text).run(); }

}  // namespace ctile::ir
