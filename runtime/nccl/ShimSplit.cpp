//===- ShimSplit.cpp - ncclCommSplit on sdma ------------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// ncclCommSplit (torch's new_group) is collective over the parent: every
// rank gives a color and a key. Two all-gathers on the parent (through the
// drop-in's staged path, so it works on every device): the (color, key)
// pairs, from which every rank computes each new communicator's members
// (one color, ordered by key, then parent rank) and its leader (the first
// member); then the leaders' new unique ids. Each member joins its
// leader's job as its position; a rank with NCCL_SPLIT_NOCOLOR gets NULL.
//
//===----------------------------------------------------------------------===//

#include "Shim.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace sdma::nccl;

#define NCCL_API extern "C" __attribute__((visibility("default")))

NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                    ncclComm_t *newcomm, ncclConfig_t *config) {
  if (ncclResult_t r = checkComm(comm, "ncclCommSplit"))
    return r;
  if (!newcomm)
    return fail(comm, ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
  *newcomm = nullptr;
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return fail(comm, ncclInvalidArgument,
                "ncclCommSplit: color " + std::to_string(color) +
                    " is negative and not NCCL_SPLIT_NOCOLOR");
  int R = comm->nranks;
  int mine[2] = {color, key};
  std::vector<int> all(2 * R);
  if (ncclResult_t r =
          ncclAllGather(mine, all.data(), 2, ncclInt32, comm, nullptr))
    return r;
  // The members of my color, in the new order, and my place among them.
  std::vector<int> members;
  for (int q = 0; q < R; ++q)
    if (all[2 * q] == color && color != NCCL_SPLIT_NOCOLOR)
      members.push_back(q);
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[2 * a + 1] < all[2 * b + 1];
  });
  bool leader = !members.empty() && members.front() == comm->rank;
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (leader)
    if (ncclResult_t r = ncclGetUniqueId(&id))
      return fail(comm, r,
                  std::string("ncclCommSplit: ") + ncclGetLastError(nullptr));
  std::vector<ncclUniqueId> ids(R);
  if (ncclResult_t r =
          ncclAllGather(&id, ids.data(), sizeof(id), ncclUint8, comm, nullptr))
    return r;
  if (members.empty())
    return ncclSuccess; // NCCL_SPLIT_NOCOLOR
  int position = int(std::find(members.begin(), members.end(), comm->rank) -
                     members.begin());
  if (ncclResult_t r = initRank(newcomm, int(members.size()),
                                ids[members.front()], position, config))
    return fail(comm, r,
                std::string("ncclCommSplit: ") + ncclGetLastError(nullptr));
  return ncclSuccess;
}
