"""Builds the ctile torch extension (torch.utils.cpp_extension.load) and checks it against torch.

    CTILE_LIB=build/torch-ext/src/libctile.a python examples/torch_extension/run.py [--out DIR] [--device cpu|cuda|all]

scripts/gpu_torch_ext.sh builds libctile.a with torch's C++ ABI and runs this. Every check compares a
ctile kernel run on torch tensors with torch's own result on fresh random inputs (the seed is
printed; CTILE_TEST_SEED reproduces a run), and checks that ctile read and wrote torch's memory in
place (zero copies). Exits non-zero when a check fails; writes torch_extension.txt under --out.
"""
import argparse
import os
import random
import sys
import time

import torch
from torch.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def _build_dir():
    d = os.environ.get("CTILE_EXT_BUILD")
    if d:
        os.makedirs(d, exist_ok=True)
    return d or None


def _process_libstdcxx():
    """The libstdc++ this process (torch) runs on, to link the extension against by its full path.

    Some toolchains link libstdc++ statically into a shared object (a compiler without libstdc++.so,
    or one that passes -static-libstdc++). The extension then carries a second copy of the iostream
    and locale code beside the process's own, and the first ostream insert inside ctile crashes
    (seen on the H200 machine: std::ostream::_M_insert<long> in ctile_torch.so, NEEDED without
    libstdc++). Naming the loaded libstdc++.so.6 before the compiler's own libraries makes the linker
    resolve every C++ runtime symbol against it.
    """
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libstdc++.so"):
                    return [path]
    except OSError:
        pass
    return []


def build(verbose):
    lib = os.path.abspath(os.environ.get("CTILE_LIB", os.path.join(ROOT, "build", "torch-ext", "src", "libctile.a")))
    if not os.path.exists(lib):
        sys.exit(f"run.py: {lib} does not exist: build it with scripts/gpu_torch_ext.sh (or set CTILE_LIB)")
    t0 = time.time()
    ext = load(
        name="ctile_torch",
        sources=[os.path.join(HERE, "ctile_torch.cpp")],
        extra_include_paths=[os.path.join(ROOT, "include")],
        # ctile is C++20; the flag after torch's -std=c++17 wins.
        extra_cflags=["-std=c++20", "-O2"],
        extra_ldflags=[lib, *_process_libstdcxx(), "-ldl", "-lpthread"],
        build_directory=_build_dir(),
        verbose=verbose,
    )
    return ext, time.time() - t0


class Checks:
    def __init__(self, quiet=False):
        self.lines, self.failed, self.quiet = [], 0, quiet

    def check(self, name, ok, detail=""):
        line = f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({detail})" if detail else "")
        if not self.quiet:
            print(line, flush=True)
        self.lines.append(line)
        self.failed += 0 if ok else 1

    def close(self, name, got, want, rtol, atol):
        err = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
        ok = got.shape == want.shape and torch.allclose(got, want, rtol=rtol, atol=atol)
        self.check(name, ok, f"max abs err {err:.3g}")


def run(ext, dev, c, gen):
    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float32).to(dev)

    stream = (lambda: torch.cuda.current_stream().cuda_stream) if dev == "cuda" else (lambda: 0)
    rows, cols = 300, 200  # not multiples of the tiles: padded loads and masked stores
    x, bias, alpha = randn(rows, cols), randn(cols), random.uniform(-2, 2)
    want = (x + bias) * alpha

    z = ext.scaled_add(x, bias, alpha, stream())
    c.close(f"{dev}: scaled_add, contiguous", z, want, 1e-6, 1e-6)
    c.check(f"{dev}: zero copy: ctile reads x at x.data_ptr()", ext.ctile_data_ptr(x) == x.data_ptr())

    out = torch.empty_like(x)
    ptr = out.data_ptr()
    r = ext.scaled_add_out(out, x, bias, alpha, stream())
    c.check(f"{dev}: zero copy: the result is written in place into out", r.data_ptr() == ptr and out.data_ptr() == ptr)
    c.close(f"{dev}: scaled_add_out", out, want, 1e-6, 1e-6)

    # Strided torch views go in as they are: a transpose and every other column of a wider matrix.
    base = randn(cols, rows)
    xt = base.t()
    c.check(f"{dev}: x.t() is not contiguous (strides {tuple(xt.stride())})", not xt.is_contiguous())
    c.close(f"{dev}: scaled_add on x.t()", ext.scaled_add(xt, bias, alpha, stream()), (xt + bias) * alpha, 1e-6, 1e-6)
    wide = randn(rows, 2 * cols)
    xs = wide[:, ::2]
    c.close(f"{dev}: scaled_add on x[:, ::2]", ext.scaled_add(xs, bias, alpha, stream()), (xs + bias) * alpha, 1e-6, 1e-6)

    s = randn(rows, 1000) * 4
    c.close(f"{dev}: softmax", ext.softmax(s, stream()), torch.softmax(s, dim=1), 1e-5, 1e-7)

    # Self-test: the comparisons above can fail (a result off by 1e-3, a wrong pointer).
    probe = Checks(quiet=True)
    probe.close("selftest", z + 1e-3, want, 1e-6, 1e-6)
    probe.check("selftest", ext.ctile_data_ptr(x[1:]) == x.data_ptr())
    c.check(f"{dev}: self-test: a wrong result and a moved pointer fail their checks", probe.failed == 2)

    # A bad input is ctile's UserError, raised to Python as a RuntimeError that names the problem.
    try:
        ext.scaled_add(x.double(), bias, alpha, stream())
        c.check(f"{dev}: float64 input rejected", False, "no error")
    except RuntimeError as e:
        c.check(f"{dev}: float64 input rejected", "holds float64, not f32" in str(e), str(e).splitlines()[0][:160])

    if dev == "cuda":
        # torch's work queued just before the call (on a side stream) comes first, and torch's work
        # after it sees the result: all three are ordered on the same stream, with no host wait.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())  # x is ready before the side stream uses it
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)  # a long kernel ahead of ours on the stream
            y = x * 3  # written by torch right before ctile reads it
            z2 = ext.scaled_add(y, bias, alpha, side.cuda_stream)
            z3 = z2 * 2  # torch reads ctile's result
        side.synchronize()
        c.close("cuda: ordered on torch's current stream (side stream)", z3, (x * 3 + bias) * alpha * 2, 1e-6, 1e-6)
        torch.cuda.synchronize()
        c.check("cuda: the kernels ran on the GPU (ctile::cuda_launch_count)", ext.gpu_launches() >= 6,
                f"{ext.gpu_launches()} GPU launches")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", os.path.join(ROOT, "results")))
    ap.add_argument("--device", default="all", choices=["cpu", "cuda", "all"])
    ap.add_argument("--require-gpu", action="store_true", help="fail (not skip) the CUDA checks without a GPU")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    seed = int(os.environ.get("CTILE_TEST_SEED", random.SystemRandom().randrange(1 << 31)))
    print(f"seed {seed} (CTILE_TEST_SEED={seed} reproduces this run); torch {torch.__version__}", flush=True)
    random.seed(seed)
    ext, secs = build(a.verbose)
    c = Checks()
    c.check("extension built", True, f"{secs:.1f} s")
    devices = ["cpu", "cuda"] if a.device == "all" else [a.device]
    for dev in devices:
        if dev == "cuda" and not torch.cuda.is_available():
            if a.require_gpu or a.device == "cuda":
                c.check("cuda: torch sees a GPU", False, "torch.cuda.is_available() is False")
            else:
                print("SKIP  cuda: torch sees no GPU", flush=True)
            continue
        gen = torch.Generator().manual_seed(seed)
        run(ext, dev, c, gen)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "torch_extension.txt"), "w") as f:
        f.write(f"seed {seed}; torch {torch.__version__}\n" + "\n".join(c.lines) + "\n")
        f.write(f"{'ALL PASSED' if c.failed == 0 else f'{c.failed} FAILED'}\n")
    print("ALL PASSED" if c.failed == 0 else f"{c.failed} FAILED", flush=True)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
