//===- CApiNodes.cpp - the C API's multi-node communicator ----------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sdmaCommInitMultiNode: the job's transport (an sdmaTransport_t of
// callbacks: sdma_mpi.h makes one over MPI) as a sdma::rt::Transport, and
// the MultiNodeComm over it. The other entries route a multi-node
// communicator's calls in CApi.cpp and CApiPeer.cpp.
//
//===----------------------------------------------------------------------===//

#include "capi/CApiCommon.h"
#include "sdma/runtime/CTransport.h"

using namespace sdma::rt;
using namespace sdma::capi;

namespace {

/// The C callbacks as a Transport.
class CallbackTransport : public Transport {
public:
  explicit CallbackTransport(const sdmaTransport_t &transport)
      : transport_(transport), name_(transport.name ? transport.name : "user") {
  }

  int rank() const override { return transport_.rank; }
  int ranks() const override { return transport_.nranks; }
  std::string name() const override { return name_; }
  bool deviceMemory() const override { return transport_.deviceMemory != 0; }

  bool exchange(const std::vector<TransportOp> &ops, void *stream,
                Error &error) override {
    std::string message;
    sdmaResult_t result = exchangeThroughC(
        transport_.exchange, transport_.context, ops, stream, message);
    if (result == sdmaSuccess)
      return true;
    return error.fail(
        transportErrorKind(result),
        name_ + " transport: " +
            (message.empty() ? sdmaGetErrorString(result) : message));
  }

private:
  sdmaTransport_t transport_;
  std::string name_;
};

} // namespace

extern "C" sdmaResult_t sdmaCommInitMultiNode(sdmaComm_t *comm,
                                              const sdmaTransport_t *transport,
                                              int localRanks,
                                              sdmaConfig_t *config) {
  if (!comm)
    return fail(nullptr, sdmaInvalidArgument, "comm is NULL");
  *comm = nullptr;
  if (!transport || !transport->exchange)
    return fail(nullptr, sdmaInvalidArgument,
                "sdmaCommInitMultiNode: no transport (or no exchange)");
  if (transport->nranks < 1 || transport->rank < 0 ||
      transport->rank >= transport->nranks || localRanks < 0)
    return fail(nullptr, sdmaInvalidArgument,
                "sdmaCommInitMultiNode: rank " +
                    std::to_string(transport->rank) + " of " +
                    std::to_string(transport->nranks) + ", " +
                    std::to_string(localRanks) + " ranks per node: not a job");
  std::string why;
  CommOptions options;
  if (!readConfig(config, options, why))
    return fail(nullptr, sdmaInvalidArgument, why);
  return guarded(nullptr, [&] {
    auto made = std::make_unique<sdmaComm>();
    made->transport = std::make_unique<CallbackTransport>(*transport);
    Error error;
    made->multi =
        MultiNodeComm::create(*made->transport, localRanks, options, error);
    if (!made->multi)
      return fail(nullptr, "rank " + std::to_string(transport->rank), error);
    made->node = &made->multi->nodeComm();
    *comm = made.release();
    liveHandles().add(*comm);
    return sdmaSuccess;
  });
}
