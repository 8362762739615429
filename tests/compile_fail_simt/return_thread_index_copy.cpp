// expect: use of deleted function|deleted
// A helper cannot return a copy of one.
#include <ctile/simt.hpp>

CTILE_SIMT_KERNEL(k, (DisjointSpan<float> out), Contract().block(32), (), {
  auto i = index_1d();
  auto value = [](const ThreadIndex& t) { return t.get(); };
  out.get_mut(i).set((float)value(i));
#ifdef CTILE_MISUSE
  auto copy = [](const ThreadIndex& t) { return t; };
  out.get_mut(copy(i)).set(2.0f);
#endif
})

int main() { return 0; }
