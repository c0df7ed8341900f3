//===- ScheduleWriter.h - a flat schedule written op by op ------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// What the MSCCL XML and MSCCL++ JSON importers share: the collective and
// buffers of an imported algorithm (MSCCL's i, o, s as %input, %output,
// %scratch, in place folded, the landing buffer %xfer), ops written one by
// one with the location of what they came from, fences counted, and the
// whole parsed as a schedule. The element type and operator of reductions
// come from --msccl-type and --msccl-reduce-op (neither format carries
// them: they are the call's).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_MSCCL_SCHEDULEWRITER_H
#define SDMA_LIB_TARGET_MSCCL_SCHEDULEWRITER_H

#include "XmlReader.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <vector>

namespace sdma::msccl {

/// --msccl-type and --msccl-reduce-op; false after reporting a bad one.
bool checkOptions(mlir::MLIRContext *context);
const std::string &reduceOpOption();

/// After a topological sort stopped with nodes left (indegree > 0): a
/// cycle among them, followed from the first left node `start` accepts
/// through unfinished predecessors until one repeats (every left node has
/// one), in the order each waits for the next.
template <typename Node, typename Accept>
std::vector<Node>
leftoverCycle(const std::vector<Node> &all, std::map<Node, int> &indegree,
              std::map<Node, std::vector<Node>> &pred, Accept start) {
  Node at{};
  for (const Node &n : all)
    if (indegree[n] > 0 && start(n)) {
      at = n;
      break;
    }
  std::vector<Node> path;
  std::map<Node, size_t> seenAt;
  while (!seenAt.count(at)) {
    seenAt[at] = path.size();
    path.push_back(at);
    for (const Node &p : pred[at])
      if (indegree[p] > 0) {
        at = p;
        break;
      }
  }
  return std::vector<Node>(path.begin() + seenAt[at], path.end());
}

class ScheduleWriter {
public:
  ScheduleWriter(mlir::MLIRContext *context, std::string file)
      : context_(context), file_(std::move(file)) {}

  /// The collective by MSCCL's name (allgather, allreduce, alltoall,
  /// reducescatter or reduce_scatter; anything else declares none), in
  /// place or not, whether anything reduces; each gpu's input and output
  /// chunks and the largest scratch.
  void setShape(llvm::StringRef collective, bool inplace, bool reduces,
                std::vector<int64_t> input, std::vector<int64_t> output,
                int64_t scratch);
  /// sdma's name of the collective ("" for none).
  const std::string &kind() const { return kind_; }
  /// Why gpu `g`'s sizes do not fit the collective ("" if they do), and
  /// whether the input's size is the one to blame.
  std::string misfit(int g, bool &blameInput) const;

  /// The buffer and chunk offset of gpu `g`'s chunk `offset` of MSCCL's
  /// buffer 'i', 'o' or 's' (in place folded).
  std::pair<std::string, int64_t> where(int g, char buffer,
                                        int64_t offset) const;
  std::string slice(int g, char buffer, int64_t offset, int64_t count) const;
  std::string xferSlice(int g, int64_t slot, int64_t count) const;
  /// A fresh slot of `count` chunks in gpu `g`'s landing buffer.
  int64_t xferSlot(int g, int64_t count);

  mlir::Location loc(xml::Position at) const;
  /// Appends `op` (issued by `g`) with the location `at`.
  void emit(int g, xml::Position at, const std::string &op);
  /// Ops written so far: a mark to compare fences with.
  int64_t mark() const { return ops_; }
  /// True if a fence on `g` (or on every rank) was written at or after
  /// `mark`.
  bool fencedSince(int g, int64_t mark) const;

  /// In place, before the algorithm: an all-gather's input into its chunk
  /// of the output. After it: a reduce-scatter's chunk out of the input.
  void prologue(xml::Position at);
  void epilogue(xml::Position at);
  /// The schedule named `name` (made a symbol), or null after an error.
  mlir::OwningOpRef<mlir::Operation *> finish(llvm::StringRef name,
                                              xml::Position at);

private:
  std::string locText(xml::Position at) const;
  std::string header(llvm::StringRef name) const;

  mlir::MLIRContext *context_;
  std::string file_;
  std::string kind_;
  bool inplace_ = false, oneBuffer_ = false, typed_ = false;
  std::vector<int64_t> input_, output_;
  int64_t scratch_ = 0, xferChunks_ = 0, ops_ = 0;
  std::map<int, int64_t> xferUsed_, lastFence_;
  std::string body_;
};

} // namespace sdma::msccl

#endif // SDMA_LIB_TARGET_MSCCL_SCHEDULEWRITER_H
