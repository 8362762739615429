// ctile's own declarations of the DLPack ABI (include/ctile/interop/dlpack.hpp) against the
// system's <dlpack/dlpack.h> (Debian's libdlpack-dev, scripts/setup.sh): the same sizes, field
// offsets and enum values, and a tensor declared with the system's types goes through
// from_dlpack / dlpack_cast unchanged. (Debian ships DLPack 0.6, which has no versioned struct and
// no kDLBool and no FP8 codes; those are checked when the header has them.)
#include <dlpack/dlpack.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "ctile/ctile.hpp"

namespace dl = ctile::dlpack;

#define CTILE_FIELD_MATCHES(A, B, f) (offsetof(A, f) == offsetof(B, f) && sizeof(A::f) == sizeof(B::f))
#define CTILE_SAME_FIELD(A, B, f) static_assert(CTILE_FIELD_MATCHES(A, B, f), #A "::" #f " differs from the system header")

// Self-test: the field check fails for a declaration whose field moved (a padding word before
// `ndim`) or changed size (a 64-bit `ndim`).
namespace selftest {
struct Moved {
  void* data;
  ::DLDevice device;
  std::int32_t pad[2];
  std::int32_t ndim;
};
struct Wider {
  void* data;
  ::DLDevice device;
  std::int64_t ndim;
};
}  // namespace selftest
static_assert(!CTILE_FIELD_MATCHES(selftest::Moved, ::DLTensor, ndim));
static_assert(!CTILE_FIELD_MATCHES(selftest::Wider, ::DLTensor, ndim));

static_assert(sizeof(dl::DLDevice) == sizeof(::DLDevice));
CTILE_SAME_FIELD(dl::DLDevice, ::DLDevice, device_type);
CTILE_SAME_FIELD(dl::DLDevice, ::DLDevice, device_id);
static_assert(sizeof(dl::DLDataType) == sizeof(::DLDataType));
CTILE_SAME_FIELD(dl::DLDataType, ::DLDataType, code);
CTILE_SAME_FIELD(dl::DLDataType, ::DLDataType, bits);
CTILE_SAME_FIELD(dl::DLDataType, ::DLDataType, lanes);
static_assert(sizeof(dl::DLTensor) == sizeof(::DLTensor));
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, data);
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, device);
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, ndim);
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, dtype);
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, shape);
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, strides);
CTILE_SAME_FIELD(dl::DLTensor, ::DLTensor, byte_offset);
static_assert(sizeof(dl::DLManagedTensor) == sizeof(::DLManagedTensor));
CTILE_SAME_FIELD(dl::DLManagedTensor, ::DLManagedTensor, dl_tensor);
CTILE_SAME_FIELD(dl::DLManagedTensor, ::DLManagedTensor, manager_ctx);
CTILE_SAME_FIELD(dl::DLManagedTensor, ::DLManagedTensor, deleter);
#define CTILE_SAME_CODE(name) static_assert(int(dl::name) == int(::name), #name " differs from the system header")
CTILE_SAME_CODE(kDLCPU);
CTILE_SAME_CODE(kDLCUDA);
CTILE_SAME_CODE(kDLCUDAHost);
CTILE_SAME_CODE(kDLCUDAManaged);
CTILE_SAME_CODE(kDLInt);
CTILE_SAME_CODE(kDLUInt);
CTILE_SAME_CODE(kDLFloat);
CTILE_SAME_CODE(kDLOpaqueHandle);
CTILE_SAME_CODE(kDLBfloat);
CTILE_SAME_CODE(kDLComplex);
static_assert(dl::ManagedLike<::DLManagedTensor>, "the system's DLManagedTensor is accepted by from_dlpack");
#ifdef DLPACK_FLAG_BITMASK_READ_ONLY
static_assert(sizeof(dl::DLManagedTensorVersioned) == sizeof(::DLManagedTensorVersioned));
CTILE_SAME_FIELD(dl::DLManagedTensorVersioned, ::DLManagedTensorVersioned, version);
CTILE_SAME_FIELD(dl::DLManagedTensorVersioned, ::DLManagedTensorVersioned, manager_ctx);
CTILE_SAME_FIELD(dl::DLManagedTensorVersioned, ::DLManagedTensorVersioned, deleter);
CTILE_SAME_FIELD(dl::DLManagedTensorVersioned, ::DLManagedTensorVersioned, flags);
CTILE_SAME_FIELD(dl::DLManagedTensorVersioned, ::DLManagedTensorVersioned, dl_tensor);
static_assert(dl::kFlagReadOnly == DLPACK_FLAG_BITMASK_READ_ONLY && dl::kFlagIsCopied == DLPACK_FLAG_BITMASK_IS_COPIED);
static_assert(dl::VersionedLike<::DLManagedTensorVersioned>);
#endif
#if DLPACK_VERSION >= 80 || defined(DLPACK_MAJOR_VERSION)
CTILE_SAME_CODE(kDLBool);
#endif
#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION * 100 + DLPACK_MINOR_VERSION >= 101  // the FP8 codes came with 1.1
CTILE_SAME_CODE(kDLFloat8_e4m3fn);
CTILE_SAME_CODE(kDLFloat8_e5m2);
#endif

namespace {

int g_deleted = 0;

TEST(DLPackAbi, SystemHeaderTypesRoundTrip) {
  // A producer that speaks the system header's types.
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  std::vector<std::int64_t> shape{2, 3};
  ::DLManagedTensor m{};
  m.dl_tensor.data = data.data();
  m.dl_tensor.device = ::DLDevice{::kDLCPU, 0};
  m.dl_tensor.ndim = 2;
  m.dl_tensor.dtype = ::DLDataType{::kDLFloat, 32, 1};
  m.dl_tensor.shape = shape.data();
  m.deleter = [](::DLManagedTensor*) { ++g_deleted; };
  {
    auto t = ctile::from_dlpack<float>(&m);
    EXPECT_EQ(t.shape(), (ctile::Shape{2, 3}));
    EXPECT_EQ(t.to_host(), data);
    // And back out to a consumer that names the system's type.
    ::DLManagedTensor* out = ctile::dlpack_cast<::DLManagedTensor>(ctile::to_dlpack_unversioned(std::move(t)));
    EXPECT_EQ(out->dl_tensor.data, data.data());
    EXPECT_EQ(out->dl_tensor.shape[1], 3);
    EXPECT_EQ(g_deleted, 0);
    out->deleter(out);
  }
  EXPECT_EQ(g_deleted, 1);
}

}  // namespace
