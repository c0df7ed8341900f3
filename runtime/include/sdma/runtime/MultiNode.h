//===- MultiNode.h - a communicator across nodes ----------------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A job over N nodes of G ranks: within a node, a Communicator (shared
// memory, IPC, the node's kernels and copy engines); between nodes, the
// job's Transport (MPI, NCCL). A hierarchical schedule (sdma.local_ranks)
// is compiled into its node plan (NodePlan.h); a launch runs its phases in
// order on the caller's buffers: a local phase as the node's part, launched
// on the node's communicator, a network phase as one group of the
// transport's sends and receives. Ranks are node-major: job rank r is local
// rank r mod G of node r / G, as torchrun and mpirun number them.
//
// What every rank must agree on is checked over the transport, an error on
// every rank naming the rank that differs: the node shape and that each
// node's ranks are on one host ($SDMA_HOST_ID, else the hostname) at create,
// the schedule's text at load, and each (schedule, chunk size) at its first
// launch. Once a launch fails, the communicator stays failed.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_MULTINODE_H
#define SDMA_RUNTIME_MULTINODE_H

#include "sdma/runtime/Communicator.h"
#include "sdma/runtime/NodePlan.h"
#include "sdma/runtime/Transport.h"

#include <map>
#include <memory>
#include <set>

namespace sdma::rt {

class ScheduleCompiler;

class MultiNodeComm {
public:
  /// Joins the job: `node` is this rank's node's communicator (ranks: the
  /// node's G; rank: the local one), `transport` spans the job and outlives
  /// the result. Collective over the job.
  static std::unique_ptr<MultiNodeComm>
  create(std::unique_ptr<Communicator> node, Transport &transport,
         Error &error);
  /// Joins the job with a node communicator of its own: `localRanks` per
  /// node (0: the launcher's, $LOCAL_WORLD_SIZE from torchrun or
  /// $OMPI_COMM_WORLD_LOCAL_SIZE from OpenMPI's mpirun), the node's first
  /// rank making the node's unique id and sending it over the transport.
  /// Collective over the job.
  static std::unique_ptr<MultiNodeComm> create(Transport &transport,
                                               int localRanks,
                                               const CommOptions &options,
                                               Error &error);
  ~MultiNodeComm();

  int rank() const { return transport_.rank(); }
  int ranks() const { return transport_.ranks(); }
  int localRanks() const { return node_->ranks(); }
  int node() const { return rank() / localRanks(); }
  Communicator &nodeComm() { return *node_; }
  /// False, with the error, once a launch failed (it stays failed) or a
  /// kernel of the node's communicator did.
  bool asyncError(Error &error) {
    if (hasFailed_)
      return error = failed_, false;
    return node_->asyncError(error);
  }
  /// "mpi", "nccl".
  std::string transportName() const { return transport_.name(); }

  /// A hierarchical schedule, split for this job's shape.
  struct Schedule {
    NodePlan plan;
    /// [phase]: this node's part of a local phase (instance -1 where the
    /// phase is a network one or the node has nothing to do in it).
    std::vector<Communicator::Schedule> local;
    /// A premulsum: launch()'s `rowBytes` is this rank's scalar.
    bool rowIsScalar = false;
  };
  /// Compiles the schedule (text, or a path) into its node plan for this
  /// job's shape and loads this node's parts into the node's communicator;
  /// without the compiler library, a path's (or a built-in's) plan is read
  /// from the program directory, as precompile() wrote it. Collective over
  /// the job. A rooted schedule is rooted at `root` (-1: as it declares);
  /// a precompiled plan rooted elsewhere is refused.
  bool loadSchedule(const std::string &textOrPath, Schedule &schedule,
                    Error &error, int root = -1);
  /// Runs `schedule` on `buffers` (the plan's order; symmetric memory of
  /// the node's communicator where a local phase reaches a peer) with
  /// chunks of `chunkBytes`, on `stream`. Collective over the job. With
  /// `phaseMicros`, the host time each phase took on this rank (the work
  /// itself on the CPU device and a host-staged transport; on a GPU, the
  /// time to enqueue a phase the stream runs later). A schedule with count
  /// tables (sdma.copyv) counts rows of `rowBytes` (0: a row is a chunk);
  /// its tables are buffers of 8-byte entries, sent whole across nodes.
  bool launch(const Schedule &schedule, const std::vector<void *> &buffers,
              size_t chunkBytes, void *stream, Error &error,
              std::vector<double> *phaseMicros = nullptr, size_t rowBytes = 0);

  /// Writes the node plans of the built-in hierarchical schedules and of
  /// `schedules` (paths) for `ranks` of `localRanks` per node into
  /// `directory` (NAME-R.G.node-plan.json, each node part compiled to its
  /// load/store program), for jobs without the compiler library.
  static bool precompile(const std::string &directory, int ranks,
                         int localRanks,
                         const std::vector<std::string> &schedules,
                         const CommOptions &options, Error &error);

  /// NCCL's all-gather, all-to-all and broadcast (from `root`) on
  /// symmetric buffers of the node's communicator (memAlloc), run by the
  /// built-in hierarchical schedules (schedules/hier). Scatter and gather
  /// are refused, saying so.
  bool collective(CommOp op, const void *send, void *recv, size_t count,
                  DataType type, int root, void *stream, Error &error);
  /// All-reduce, reduce-scatter and reduce (to `root`) in every type and
  /// operator (the hierarchical schedules, written for f32 sums, compute in
  /// the call's arithmetic; avg divides once, in the last phase that
  /// reduces, premulsum scales in the first: phaseArithmetic). The
  /// all-reduce's count must divide by the rank count.
  bool reduce(CommReduction kind, const void *send, void *recv, size_t count,
              const Arithmetic &arithmetic, int root, void *stream,
              Error &error);
  /// All-to-allv with capacity slots (Communicator::allToAllv's Slots
  /// layout) across nodes, by schedules/hier/all_to_allv.mlir: send and
  /// recv symmetric memory of R slots of `capacity` rows, the count tables
  /// (R entries, device memory) copied in and out on `stream`, no host
  /// sync; whole slots cross the network. A count over the capacity moves
  /// nothing (received as 0) and fails the sender's node.
  bool allToAllv(const void *send, const int64_t *sendCounts, void *recv,
                 int64_t *recvCounts, size_t capacity, size_t rowBytes,
                 void *stream, Error &error);
  /// Sends and receives of one group, peers numbered in the job
  /// (Communicator::sendRecv's meaning: only the peers call, a pair's
  /// messages match in issue order): the node's peers through the node's
  /// communicator, then other nodes' through the transport (staged through
  /// host memory where it takes host memory only). A failed exchange fails
  /// the communicator, as a failed network phase does.
  bool sendRecv(const std::vector<PeerOp> &ops, void *stream, Error &error);

private:
  MultiNodeComm(std::unique_ptr<Communicator> node, Transport &transport);
  /// Exchanges `value` with every rank; false on every rank, naming the
  /// first that differs from rank 0, unless all are equal.
  bool agree(const std::string &what, uint64_t value, Error &error) {
    return agreeOver(transport_, what, value, error);
  }
  static bool agreeOver(Transport &transport, const std::string &what,
                        uint64_t value, Error &error);
  /// Every rank's `value` into `values` (indexed by rank).
  static bool gatherOver(Transport &transport, const std::string &what,
                         uint64_t value, std::vector<uint64_t> &values,
                         Error &error);
  /// Agrees on whether every rank succeeded: false everywhere if one did
  /// not, with `local` where this rank is the one.
  bool agreeUnless(const Error &local, const std::string &what, Error &error);
  bool network(const NodePhase &phase, const NodePlan &plan,
               const std::vector<void *> &buffers, size_t chunkBytes,
               void *stream, Error &error);
  /// Runs `ops` through host copies of their buffers (a host transport and
  /// a GPU's buffers): the stream drained, sends copied out, the exchange,
  /// receives copied in.
  bool staged(std::vector<TransportOp> ops, void *stream, Error &error);

  std::unique_ptr<Communicator> node_;
  Transport &transport_;
  /// The built-in hierarchical schedule `name` (loaded on first use) run on
  /// `buffers`, whose missing tail (scratch) the communicator provides.
  /// A reduction's node parts compute in `arithmetic` (null: as written).
  /// A rooted built-in is rooted at `root` (-1: not rooted).
  bool builtin(const std::string &name, std::vector<void *> buffers,
               size_t chunkBytes, void *stream, Error &error,
               const Arithmetic *arithmetic = nullptr, int root = -1);
  /// The built-in `name`, loaded, with `buffers` completed by its scratch.
  const Schedule *
  builtinWithScratch(const std::string &name, std::vector<void *> &buffers,
                     size_t chunkBytes, void *stream, Error &error,
                     const Arithmetic *arithmetic = nullptr, int root = -1);

  /// loadSchedule of `textOrPath`, named `name` ("<schedule>" for text):
  /// the name finds a precompiled plan.
  bool load(const std::string &textOrPath, const std::string &name,
            Schedule &schedule, Error &error,
            const Arithmetic *arithmetic = nullptr, int root = -1);

  std::unique_ptr<ScheduleCompiler> compiler_;
  bool compilerTried_ = false;
  std::string compilerError_;
  std::map<std::string, Schedule> builtins_;
  /// Scratch buffers of the built-ins in the node's symmetric memory:
  /// [index] -> (pointer, bytes), grown as calls need.
  std::vector<std::pair<void *, size_t>> scratch_;
  std::set<std::pair<std::string, size_t>> checked_;
  /// Host copies of a network phase's slices, where the transport takes
  /// host memory and the buffers are a GPU's.
  std::vector<std::vector<char>> staging_;
  Error failed_;
  bool hasFailed_ = false;
};

} // namespace sdma::rt

#endif // SDMA_RUNTIME_MULTINODE_H
