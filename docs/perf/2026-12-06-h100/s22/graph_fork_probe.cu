// Session 22 probe (not part of ctile): does compute-sanitizer's --track-stream-ordered-races report
// a use-after-free for memory that a graph's forked branch used, when the free is ordered after the
// graph's launch by an event (no ctile involved)? The graph has ctile's shape from
// runtime_graph_inputs_change_between_replays: t0 = a + b (root 1), t1 = c a + t1 (root 2, the
// "forked lane"), out = t0 + t1 (the join), out += in. Built with explicit nodes (as ctile builds
// graphs) or by stream capture (argv[1] = "explicit" | "capture"); "empty-root": explicit, both
// kernel roots after one empty node; "serial": explicit, the second root after the first. The memory comes from the
// default pool on a separate memory stream, as ctile's does; each free waits for an event recorded
// on the replay stream after the last replay.
//   nvcc -arch=sm_90 -o probe graph_fork_probe.cu && compute-sanitizer --track-stream-ordered-races all ./probe explicit
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void add2(float* o, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = a[i] + b[i];
}
__global__ void axpy(float* o, float c, const float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] = c * a[i] + o[i];
}
__global__ void acc(float* o, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[i] += x[i];
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "explicit";
  const bool capture = !std::strcmp(mode, "capture"), empty_root = !std::strcmp(mode, "empty-root"),
             serial = !std::strcmp(mode, "serial");
  const int n = 8192;
  const size_t bytes = n * sizeof(float);
  cudaStream_t s, fork, mem;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&fork, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&mem, cudaStreamNonBlocking));
  float *a, *b, *in, *t0, *t1, *out;
  float** all[] = {&a, &b, &in, &t0, &t1, &out};
  for (float** p : all) CK(cudaMallocAsync((void**)p, bytes, mem));
  for (float** p : all) CK(cudaMemsetAsync(*p, 0, bytes, mem));
  cudaEvent_t ready, done, e1, e2;
  CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
  CK(cudaEventRecord(ready, mem));
  CK(cudaStreamWaitEvent(s, ready, 0));  // the allocations, ordered before first use on the device
  const int blk = 256, grd = n / blk;
  float c = 1.5f;
  int nn = n;
  cudaGraph_t g;
  if (capture) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    add2<<<grd, blk, 0, s>>>(t0, a, b, n);
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamWaitEvent(fork, e1, 0));
    axpy<<<grd, blk, 0, fork>>>(t1, c, a, n);
    CK(cudaEventRecord(e2, fork));
    CK(cudaStreamWaitEvent(s, e2, 0));
    add2<<<grd, blk, 0, s>>>(out, t0, t1, n);
    acc<<<grd, blk, 0, s>>>(out, in, n);
    CK(cudaStreamEndCapture(s, &g));
  } else {
    CK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t n0, n1, n2, n3;
    auto node = [&](cudaGraphNode_t* nd, void* fn, void** args, const cudaGraphNode_t* deps, size_t nd_) {
      cudaKernelNodeParams p{};
      p.func = fn;
      p.gridDim = dim3(grd);
      p.blockDim = dim3(blk);
      p.kernelParams = args;
      return cudaGraphAddKernelNode(nd, g, deps, nd_, &p);
    };
    void* a0[] = {&t0, &a, &b, &nn};
    void* a1[] = {&t1, &c, &a, &nn};
    void* a2[] = {&out, &t0, &t1, &nn};
    void* a3[] = {&out, &in, &nn};
    cudaGraphNode_t root;
    const cudaGraphNode_t* rd = nullptr;
    size_t nr = 0;
    if (empty_root) {
      CK(cudaGraphAddEmptyNode(&root, g, nullptr, 0));
      rd = &root;
      nr = 1;
    }
    CK(node(&n0, (void*)add2, a0, rd, nr));
    if (serial) CK(node(&n1, (void*)axpy, a1, &n0, 1));
    else CK(node(&n1, (void*)axpy, a1, rd, nr));
    cudaGraphNode_t d2[] = {n0, n1};
    CK(node(&n2, (void*)add2, a2, d2, 2));
    CK(node(&n3, (void*)acc, a3, &n2, 1));
  }
  cudaGraphExec_t ex;
  CK(cudaGraphInstantiate(&ex, g, 0));
  for (int r = 0; r < 5; ++r) {
    CK(cudaGraphLaunch(ex, s));
    CK(cudaEventRecord(done, s));
    CK(cudaEventSynchronize(done));
  }
  CK(cudaGraphExecDestroy(ex));
  CK(cudaGraphDestroy(g));
  CK(cudaStreamWaitEvent(mem, done, 0));  // every free after the last replay, on the device
  for (float** p : all) CK(cudaFreeAsync(*p, mem));
  CK(cudaStreamSynchronize(mem));
  std::printf("probe (%s graph): done\n", mode);
  return 0;
}
