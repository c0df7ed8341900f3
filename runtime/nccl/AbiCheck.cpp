//===- AbiCheck.cpp - sdma's NCCL declarations against NCCL's header ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Built where CUDA's nccl.h is found (CMake: SDMA_NCCL_SYSTEM_HEADER): the
// drop-in's own declarations (NcclAbi.h, in a namespace) against NCCL's,
// value by value and field by field, at compile time. The entry points
// need no check here: with the system header the drop-in's definitions are
// compiled against NCCL's own prototypes. A macro of NcclAbi.h that
// differs from nccl.h's is a redefinition error (-Werror).
//
//===----------------------------------------------------------------------===//

#include <nccl.h>

#include <cstddef>

namespace own {
#define SDMA_NCCL_ABI_NAMESPACE 1
#define SDMA_NCCL_OWN_DECLARATIONS 1
#undef SDMA_RUNTIME_NCCL_NCCLABI_H
#include "NcclAbi.h"
} // namespace own

#define SAME_VALUE(name)                                                       \
  static_assert(static_cast<long long>(::name) ==                              \
                    static_cast<long long>(own::name),                         \
                #name " differs from nccl.h")
#define SAME_SIZE(type)                                                        \
  static_assert(sizeof(::type) == sizeof(own::type),                           \
                "sizeof(" #type ") differs from nccl.h")
#define SAME_FIELD(type, field)                                                \
  static_assert(offsetof(::type, field) == offsetof(own::type, field) &&       \
                    sizeof(::type::field) == sizeof(own::type::field),         \
                #type "::" #field " differs from nccl.h")

SAME_SIZE(ncclUniqueId);
SAME_SIZE(ncclResult_t);
SAME_SIZE(ncclRedOp_t);
SAME_SIZE(ncclDataType_t);
SAME_SIZE(ncclScalarResidence_t);
SAME_SIZE(ncclConfig_t);
SAME_SIZE(ncclSimInfo_t);

SAME_VALUE(ncclSuccess);
SAME_VALUE(ncclUnhandledCudaError);
SAME_VALUE(ncclSystemError);
SAME_VALUE(ncclInternalError);
SAME_VALUE(ncclInvalidArgument);
SAME_VALUE(ncclInvalidUsage);
SAME_VALUE(ncclRemoteError);
SAME_VALUE(ncclInProgress);
SAME_VALUE(ncclNumResults);
SAME_VALUE(ncclSum);
SAME_VALUE(ncclProd);
SAME_VALUE(ncclMax);
SAME_VALUE(ncclMin);
SAME_VALUE(ncclAvg);
SAME_VALUE(ncclNumOps);
SAME_VALUE(ncclMaxRedOp);
SAME_VALUE(ncclInt8);
SAME_VALUE(ncclChar);
SAME_VALUE(ncclUint8);
SAME_VALUE(ncclInt32);
SAME_VALUE(ncclInt);
SAME_VALUE(ncclUint32);
SAME_VALUE(ncclInt64);
SAME_VALUE(ncclUint64);
SAME_VALUE(ncclFloat16);
SAME_VALUE(ncclHalf);
SAME_VALUE(ncclFloat32);
SAME_VALUE(ncclFloat);
SAME_VALUE(ncclFloat64);
SAME_VALUE(ncclDouble);
SAME_VALUE(ncclBfloat16);
SAME_VALUE(ncclFloat8e4m3);
SAME_VALUE(ncclFloat8e5m2);
SAME_VALUE(ncclNumTypes);
SAME_VALUE(ncclScalarDevice);
SAME_VALUE(ncclScalarHostImmediate);

SAME_FIELD(ncclConfig_t, size);
SAME_FIELD(ncclConfig_t, magic);
SAME_FIELD(ncclConfig_t, version);
SAME_FIELD(ncclConfig_t, blocking);
SAME_FIELD(ncclConfig_t, cgaClusterSize);
SAME_FIELD(ncclConfig_t, minCTAs);
SAME_FIELD(ncclConfig_t, maxCTAs);
SAME_FIELD(ncclConfig_t, netName);
SAME_FIELD(ncclConfig_t, splitShare);
SAME_FIELD(ncclConfig_t, trafficClass);
SAME_FIELD(ncclConfig_t, commName);
SAME_FIELD(ncclConfig_t, collnetEnable);
SAME_FIELD(ncclConfig_t, CTAPolicy);
SAME_FIELD(ncclConfig_t, shrinkShare);
SAME_FIELD(ncclConfig_t, nvlsCTAs);
SAME_FIELD(ncclConfig_t, nChannelsPerNetPeer);
SAME_FIELD(ncclConfig_t, nvlinkCentricSched);
SAME_FIELD(ncclSimInfo_t, estimatedTime);

static_assert(NCCL_VERSION(2, 28, 9) == 22809 && NCCL_UNDEF_FLOAT < 0,
              "NCCL_VERSION differs");
static_assert(NCCL_VERSION_CODE == 22809,
              "the drop-in implements NCCL 2.28.9's ABI; nccl.h is another");
