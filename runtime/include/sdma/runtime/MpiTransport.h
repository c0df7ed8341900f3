//===- MpiTransport.h - network phases over the job's MPI -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Header only: compiled into the job, against the job's MPI (OpenMPI,
// MPICH), so libsdma links no MPI. A group is MPI_Irecv/MPI_Isend of every
// op, the k-th message of a pair tagged k (so a pair's messages match in
// order whatever MPI's matching does), then a wait bounded by the timeout:
// a peer that never sends is named, not waited for forever. Host memory
// only (the CPU device; on a GPU, deviceMemory() false: sdma stages).
//
//   MPI_Comm world = MPI_COMM_WORLD;
//   sdma::rt::MpiTransport transport(world, /*timeoutMs=*/30000);
//   auto job = sdma::rt::MultiNodeComm::create(std::move(node), transport,
//                                               error);
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_MPITRANSPORT_H
#define SDMA_RUNTIME_MPITRANSPORT_H

#include "sdma/runtime/Transport.h"

// MPI's C interface only (OpenMPI's and MPICH's C++ bindings are
// deprecated and would need their own library).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <chrono>
#include <climits>
#include <map>
#include <set>
#include <thread>

namespace sdma::rt {

class MpiTransport : public Transport {
public:
  /// `comm`: the job's communicator (its ranks node-major); waits give up
  /// after `timeoutMs`.
  MpiTransport(MPI_Comm comm, uint64_t timeoutMs)
      : comm_(comm), timeoutMs_(timeoutMs) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
  }

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  std::string name() const override { return "mpi"; }
  bool deviceMemory() const override { return false; }

  bool exchange(const std::vector<TransportOp> &ops, void * /*stream*/,
                Error &error) override {
    std::vector<MPI_Request> requests;
    std::vector<const TransportOp *> posted;
    std::map<std::pair<int, bool>, int> sequence; // (peer, send) -> next tag
    // Receives first: a peer's send then finds its match posted.
    for (int pass = 0; pass < 2; ++pass)
      for (const TransportOp &op : ops) {
        if (op.send != (pass == 1))
          continue;
        if (op.peer < 0 || op.peer >= ranks_ || op.peer == rank_)
          return error.fail(ErrorKind::InvalidArgument,
                            "MPI transport: peer " + std::to_string(op.peer) +
                                " is not another rank of " +
                                std::to_string(ranks_));
        if (op.bytes > static_cast<uint64_t>(INT_MAX))
          return error.fail(ErrorKind::InvalidArgument,
                            "MPI transport: a message of " +
                                std::to_string(op.bytes) +
                                " bytes exceeds MPI's int count");
        int tag = sequence[{op.peer, op.send}]++;
        MPI_Request request;
        int rc = op.send ? MPI_Isend(op.buffer, static_cast<int>(op.bytes),
                                     MPI_BYTE, op.peer, tag, comm_, &request)
                         : MPI_Irecv(op.buffer, static_cast<int>(op.bytes),
                                     MPI_BYTE, op.peer, tag, comm_, &request);
        if (rc != MPI_SUCCESS)
          return error.fail(ErrorKind::System,
                            std::string("MPI transport: MPI_I") +
                                (op.send ? "send" : "recv") + " to rank " +
                                std::to_string(op.peer) + " failed");
        requests.push_back(request);
        posted.push_back(&op);
      }
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(timeoutMs_);
    std::vector<int> done(requests.size(), 0);
    size_t finished = 0;
    while (finished < requests.size()) {
      for (size_t i = 0; i < requests.size(); ++i) {
        if (done[i])
          continue;
        int flag = 0;
        if (MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return error.fail(ErrorKind::System,
                            "MPI transport: a message with rank " +
                                std::to_string(posted[i]->peer) + " failed");
        if (flag) {
          done[i] = 1;
          ++finished;
        }
      }
      if (finished == requests.size())
        break;
      if (std::chrono::steady_clock::now() > deadline) {
        std::set<int> from, to;
        for (size_t i = 0; i < requests.size(); ++i)
          if (!done[i])
            (posted[i]->send ? to : from).insert(posted[i]->peer);
        std::string message = "MPI transport: rank " + std::to_string(rank_) +
                              ": timed out after " +
                              std::to_string(timeoutMs_) + " ms";
        if (!from.empty())
          message += "; nothing arrived from rank(s) " + list(from);
        if (!to.empty())
          message += "; rank(s) " + list(to) + " never took its messages";
        return error.fail(ErrorKind::Remote, message);
      }
      std::this_thread::yield();
    }
    return true;
  }

private:
  static std::string list(const std::set<int> &ranks) {
    std::string text;
    for (int r : ranks)
      text += (text.empty() ? "" : ", ") + std::to_string(r);
    return text;
  }

  MPI_Comm comm_;
  uint64_t timeoutMs_;
  int rank_ = 0, ranks_ = 1;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_MPITRANSPORT_H
