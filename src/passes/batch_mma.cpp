// batch-mma: a batched product ([P,M,K] x [P,K,N] + [P,M,N], ct.mma of rank-3 tiles) becomes P
// products of rank 2, one per batch index, whose results are concatenated along the batch axis:
//   a_p = reshape(extract(a, [p, 0, 0], [1, M, K]))   (likewise b_p, c_p)
//   r_p = mma(a_p, b_p, c_p)                           (rank 2: the code generator's products)
//   r   = cat(cat(r_0, r_1), cat(r_2, r_3)) ...        (reshaped to [1, M, N], a balanced tree)
// The interpreter runs the batched op as it is (the reference semantics); the CUDA pipeline runs
// this pass first, so layout assignment and the code generator only ever see rank-2 products.
// P is a power of two (tile extents are), so every concatenation joins two equal halves.
#include "passes.hpp"
#include "rewrite.hpp"

namespace ctile::passes {
namespace {

using ir::OpKind;
using ir::Type;
using ir::ValueId;

class BatchMma : public Pass {
 public:
  std::string_view name() const override { return "batch-mma"; }
  void run(ir::Kernel& k, const PassContext&) override {
    for_each_region(k.body, [&](ir::Region& r) {
      for (std::size_t i = 0; i < r.ops.size(); ++i) {
        if (r.ops[i]->kind != OpKind::Mma || k.type(r.ops[i]->results[0]).rank != 3) continue;
        i = split(k, r, i);
      }
    });
  }

 private:
  // Replaces the batched product at r.ops[i]; returns the position of the last op inserted.
  static std::size_t split(ir::Kernel& k, ir::Region& r, std::size_t i) {
    const ir::Op& mma = *r.ops[i];  // owned by its unique_ptr: stays put while ops are inserted
    const ValueId a = r.ops[i]->operands[0], b = r.ops[i]->operands[1], c = r.ops[i]->operands[2];
    const ValueId result = r.ops[i]->results[0];
    const SourceLoc loc = r.ops[i]->loc;
    InsertPoint at(k, r, i);
    // The p-th [rows, cols] matrix of a rank-3 tile.
    auto slice = [&](ValueId t, std::int64_t p) {
      const Type& ty = k.type(t);
      const std::int64_t rows = ty.shape[1], cols = ty.shape[2];
      const DType d = ty.dtype;
      const ValueId piece = at.build(OpKind::Extract, {t}, loc, {Type::tile(d, {1, rows, cols})},
                                     [&](ir::Op& o) { o.offsets = {p, 0, 0}; }).results[0];
      return at.build(OpKind::Reshape, {piece}, loc, {Type::tile(d, {rows, cols})}).results[0];
    };
    const Type out = k.type(result);
    std::vector<ValueId> parts;
    for (std::int64_t p = 0; p < out.shape[0]; ++p) {
      const ValueId ap = slice(a, p), bp = slice(b, p), cp = slice(c, p);
      ir::Op& m = at.build(OpKind::Mma, {ap, bp, cp}, loc, {}, [&](ir::Op& o) { ir::copy_attributes(mma, o); });
      parts.push_back(
          at.build(OpKind::Reshape, {m.results[0]}, loc, {Type::tile(out.dtype, {1, out.shape[1], out.shape[2]})}).results[0]);
    }
    while (parts.size() > 1) {
      std::vector<ValueId> next;
      for (std::size_t j = 0; j + 1 < parts.size(); j += 2)
        next.push_back(at.build(OpKind::Cat, {parts[j], parts[j + 1]}, loc, {}, [](ir::Op& o) { o.axis = 0; }).results[0]);
      parts = std::move(next);
    }
    replace_uses(k, result, parts[0]);
    // The batched op now sits at the insert point; nothing uses its result.
    r.ops.erase(r.ops.begin() + static_cast<std::ptrdiff_t>(at.position()));
    return at.position() - 1;
  }
};

}  // namespace

std::unique_ptr<Pass> make_batch_mma() { return std::make_unique<BatchMma>(); }

}  // namespace ctile::passes
