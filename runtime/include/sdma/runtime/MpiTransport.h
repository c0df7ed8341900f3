//===- MpiTransport.h - network phases over the job's MPI -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Header only: compiled into the job, against the job's MPI (OpenMPI,
// MPICH), so libsdma links no MPI. The exchange is sdma_mpi.h's (the C
// API's MPI transport), so C and C++ jobs run the same code: a group is
// MPI_Irecv/MPI_Isend of every op, the k-th message of a pair tagged k,
// then a wait bounded by the timeout that names the peer it still waits
// for. Host memory only (on a GPU, deviceMemory() false: sdma stages).
//
//   sdma::rt::MpiTransport transport(MPI_COMM_WORLD, /*timeoutMs=*/30000);
//   auto job = sdma::rt::MultiNodeComm::create(transport, 0, options, error);
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_MPITRANSPORT_H
#define SDMA_RUNTIME_MPITRANSPORT_H

#include "sdma/runtime/CTransport.h"
#include "sdma/runtime/Transport.h"

// MPI's C interface only (OpenMPI's and MPICH's C++ bindings are
// deprecated and would need their own library).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include "sdma/sdma_mpi.h"

namespace sdma::rt {

class MpiTransport : public Transport {
public:
  /// `comm`: the job's communicator (its ranks node-major); waits give up
  /// after `timeoutMs`.
  /// (Collective over `comm`: sdma's messages travel on a duplicate of it,
  /// freed with the transport.)
  MpiTransport(MPI_Comm comm, uint64_t timeoutMs)
      : context_{MPI_COMM_NULL, timeoutMs, 0} {
    MPI_Comm_dup(comm, &context_.comm);
    MPI_Comm_rank(context_.comm, &rank_);
    MPI_Comm_size(context_.comm, &ranks_);
  }
  ~MpiTransport() override {
    if (context_.comm != MPI_COMM_NULL)
      MPI_Comm_free(&context_.comm);
  }
  MpiTransport(const MpiTransport &) = delete;
  MpiTransport &operator=(const MpiTransport &) = delete;

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  std::string name() const override { return "mpi"; }
  bool deviceMemory() const override { return false; }

  bool exchange(const std::vector<TransportOp> &ops, void *stream,
                Error &error) override {
    std::string message;
    sdmaResult_t result =
        exchangeThroughC(sdmaMpiExchange, &context_, ops, stream, message);
    if (result == sdmaSuccess)
      return true;
    return error.fail(transportErrorKind(result), "MPI transport: " + message);
  }

private:
  sdmaMpiContext context_;
  int rank_ = 0, ranks_ = 1;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_MPITRANSPORT_H
