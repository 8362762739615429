// A PyTorch C++ extension whose operators are ctile kernels, run on torch's tensors without a copy
// (docs/tutorials/torch_extension.md). Each tensor crosses over through DLPack: torch keeps the
// memory, ctile holds torch's DLPack capsule until its last launch on the tensor has finished.
// On a GPU the kernels run on torch's current stream (wrapped by ctile::Stream::wrap_cuda), so
// torch's work before and after them is ordered with them, and nothing waits on the host.
#include <ATen/DLConvertor.h>
#include <torch/extension.h>

#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>

#include <ctile/ctile.hpp>

namespace ct = ctile;

// z = (x + bias) * alpha: z is this tile block's own piece; x and bias are read-only inputs that
// may be any strided views (a transposed x, a broadcast bias row).
void scaled_add_kernel(ct::Mut<float, 2> z, ct::Ref<float, 2> x, ct::Ref<float, 2> bias, ct::Scalar<float> alpha) {
  z.store((ct::load_like(x, z) + ct::load_like(bias, z)) * alpha);
}

// Row softmax: one tile block per row (BLOCK >= cols; the tail loads as -inf).
void softmax_rows(ct::Mut<float, 2> out, ct::Ref<float, 2> x) {
  auto row = ct::load_like(x, out, -INFINITY);
  auto e = ct::exp(row - ct::max(row, 1, /*keepdims=*/true));
  out.store(e / ct::sum(e, 1, true));
}

namespace {

// torch's current stream as a ctile stream: `cu_stream` is torch.cuda.current_stream().cuda_stream
// (0: the legacy default stream). On the CPU, ctile's default CPU stream.
ct::Stream stream_for(const at::Tensor& t, std::int64_t cu_stream) {
  if (t.is_cuda()) return ct::Stream::wrap_cuda(ct::unchecked, t.get_device(), reinterpret_cast<void*>(cu_stream));
  return ct::default_stream(ct::cpu());
}

// A read-only ctile view of a torch tensor (any strides) and a writable one. The stream is the
// producer's: on a GPU, ctile's work waits for what torch has queued on it so far. ctile owns the
// DLPack capsule once from_dlpack returns; if it throws (a wrong element type, ...) nothing was
// taken, so the capsule is given back here.
template <class Take>
auto take_capsule(const at::Tensor& t, Take take) {
  DLManagedTensor* m = at::toDLPack(t);
  try {
    return take(m);
  } catch (...) {
    m->deleter(m);
    throw;
  }
}
ct::Shared<float> shared_of(const at::Tensor& t, const ct::Stream& s) {
  return take_capsule(t, [&](DLManagedTensor* m) { return ct::from_dlpack_shared<float>(m, t.is_cuda() ? s : ct::Stream()); });
}
ct::Tensor<float> tensor_of(const at::Tensor& t, const ct::Stream& s) {
  return take_capsule(t, [&](DLManagedTensor* m) { return ct::from_dlpack<float>(m, t.is_cuda() ? s : ct::Stream()); });
}

// The launch's future holds every tensor until the kernel has finished; on a GPU it is dropped
// (the kernel is ordered on torch's stream like torch's own work), on the CPU waited for.
template <class F>
void finish(F&& f, const at::Tensor& like) {
  if (!like.is_cuda()) (void)std::move(f).get();
}

std::int64_t next_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

// out = (x + bias) * alpha, written into `out` (a [rows, cols] tensor torch allocated).
at::Tensor scaled_add_out(at::Tensor out, const at::Tensor& x, const at::Tensor& bias, double alpha,
                          std::int64_t cu_stream) {
  TORCH_CHECK(x.dim() == 2 && bias.dim() == 1 && bias.size(0) == x.size(1) && out.sizes() == x.sizes(),
              "scaled_add: x [rows, cols], bias [cols], out [rows, cols]; got ", x.sizes(), ", ", bias.sizes(), ", ",
              out.sizes());
  const std::int64_t rows = x.size(0), cols = x.size(1);
  ct::Stream s = stream_for(x, cu_stream);
  auto xs = shared_of(x, s);
  auto bs = shared_of(bias, s).reshape({1, cols}).expand({rows, cols});  // a broadcast view: no copy
  auto zp = tensor_of(out, s).partition({16, 64});
  finish(ct::launch(scaled_add_kernel, std::move(zp), xs, bs, static_cast<float>(alpha)).async_on(s), x);
  return out;
}

at::Tensor scaled_add(const at::Tensor& x, const at::Tensor& bias, double alpha, std::int64_t cu_stream) {
  return scaled_add_out(at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous)), x, bias, alpha,
                        cu_stream);
}

at::Tensor softmax(const at::Tensor& x, std::int64_t cu_stream) {
  TORCH_CHECK(x.dim() == 2, "softmax: x must be [rows, cols], got ", x.sizes());
  const std::int64_t block = next_pow2(x.size(1));
  TORCH_CHECK(block <= 4096, "softmax: rows of up to 4096 columns (one tile block per row), got ", x.size(1));
  auto out = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
  ct::Stream s = stream_for(x, cu_stream);
  finish(ct::launch(softmax_rows, tensor_of(out, s).partition({1, block}), shared_of(x, s)).async_on(s), x);
  return out;
}

// The address of element 0 as ctile sees the tensor (for the zero-copy check).
std::int64_t ctile_data_ptr(const at::Tensor& x) {
  auto s = shared_of(x, ct::Stream());
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(s.data(ct::unchecked)));
}

// Whether the launches of this process ran on a GPU (ctile::cuda_launch_count) or the CPU.
std::int64_t gpu_launches() { return static_cast<std::int64_t>(ct::cuda_launch_count()); }

// CTILE_BACKTRACE=1: a crash prints the native stack (scripts/gpu_torch_ext.sh sets it when a run
// dies by a signal; the GPU machine has no debugger).
extern "C" void ctile_torch_crash(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char msg[] = "ctile_torch: fatal signal, native stack:\n";
  (void)!write(2, msg, sizeof msg - 1);
  backtrace_symbols_fd(frames, n, 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  if (const char* e = std::getenv("CTILE_BACKTRACE"); e && *e == '1') {
    std::signal(SIGSEGV, ctile_torch_crash);
    std::signal(SIGABRT, ctile_torch_crash);
    std::signal(SIGBUS, ctile_torch_crash);
  }
  m.doc() = "ctile kernels on torch tensors, zero-copy through DLPack";
  m.def("scaled_add", &scaled_add, "(x + bias) * alpha", py::arg("x"), py::arg("bias"), py::arg("alpha"),
        py::arg("cu_stream") = 0);
  m.def("scaled_add_out", &scaled_add_out, "(x + bias) * alpha into out", py::arg("out"), py::arg("x"),
        py::arg("bias"), py::arg("alpha"), py::arg("cu_stream") = 0);
  m.def("softmax", &softmax, "row softmax", py::arg("x"), py::arg("cu_stream") = 0);
  m.def("ctile_data_ptr", &ctile_data_ptr);
  m.def("gpu_launches", &gpu_launches);
}
