//===- MscclAlgo.h - an MSCCL algorithm, read and checked -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The model of an MSCCL XML algorithm (what msccl-tools writes and the
// MSCCL runtime and RCCL load):
//
//   <algo name coll ngpus nchunksperloop nchannels proto inplace>
//     <gpu id i_chunks o_chunks s_chunks>
//       <tb id send recv chan>          a thread block: one send peer, one
//         <step s type srcbuf srcoff    receive peer on one channel; its
//               dstbuf dstoff cnt       steps run in order, a step after
//               depid deps hasdep/>     step `deps` of thread block `depid`
//                                       (published: hasdep="1" there or on
//                                       a later step of that block)
// read from the XML tree with every check that needs no other gpu's view
// (attributes present and well formed, ids in range and dense, slices
// inside their buffers, a step's peers present), each failure naming the
// element and attribute. Then the messages: a step that sends (s, rcs, rrs,
// rrcs) on connection (gpu, its thread block's send peer, channel) matches
// the receiving step (r, rcs, rrs, rrc, rrcs) of the same rank on that
// connection at the peer, in order, with the same count.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_LIB_TARGET_MSCCL_MSCCLALGO_H
#define SDMA_LIB_TARGET_MSCCL_MSCCLALGO_H

#include "XmlReader.h"

#include <functional>
#include <optional>

namespace sdma::msccl {

/// The step types, as MSCCL names them.
enum class StepType {
  Send,
  Recv,
  RecvCopySend,
  RecvReduceSend,
  RecvReduceCopy,
  RecvReduceCopySend,
  Copy,
  Reduce,
  Nop
};

/// "s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop".
const char *stepTypeName(StepType type);
bool sends(StepType type);
bool receives(StepType type);
/// rrs, rrc, rrcs: the received data is combined with local data.
bool reducesReceived(StepType type);
/// Whether a step reads its gpu's src slice, writes its dst slice (a
/// send's dst and a receive-reduce-send's are the peer's, informational).
bool readsSource(StepType type);
bool writesDestination(StepType type);

/// A run of chunks of one of a gpu's buffers: 'i', 'o' or 's'.
struct Slice {
  char buffer = 'i';
  int64_t offset = 0;
};

struct Step {
  StepType type = StepType::Nop;
  Slice src, dst;
  int64_t count = 1;
  /// (thread block, step) pairs of the same gpu this step waits for: one
  /// at most (MSCCL writes more as nop steps before the step).
  std::vector<std::pair<int, int>> deps;
  /// The step publishes its completion (others may depend on it).
  bool hasdep = false;
  const xml::Element *element = nullptr;
};

struct ThreadBlock {
  int id = 0, send = -1, recv = -1, channel = 0;
  std::vector<Step> steps;
  const xml::Element *element = nullptr;
};

struct Gpu {
  int id = 0;
  int64_t inputChunks = 0, outputChunks = 0, scratchChunks = 0;
  std::vector<ThreadBlock> blocks; // by id
  const xml::Element *element = nullptr;

  int64_t chunks(char buffer) const {
    return buffer == 'i'   ? inputChunks
           : buffer == 'o' ? outputChunks
                           : scratchChunks;
  }
};

/// A step, named by where it is.
struct StepRef {
  int gpu = 0, block = 0, step = 0;
  bool operator<(const StepRef &o) const {
    return std::tie(gpu, block, step) < std::tie(o.gpu, o.block, o.step);
  }
  bool operator==(const StepRef &o) const {
    return gpu == o.gpu && block == o.block && step == o.step;
  }
};

/// One message: what a sending step hands to a receiving step.
struct Message {
  StepRef from, to;
  int channel = 0;
  int64_t count = 1;
};

struct Algorithm {
  std::string name, collective, protocol;
  int gpus = 0, channels = 1;
  int64_t chunksPerLoop = 0;
  bool inplace = false;
  std::vector<Gpu> gpuList; // by id
  std::vector<Message> messages;
  const xml::Element *element = nullptr;

  const Step &step(StepRef r) const {
    return gpuList[r.gpu].blocks[r.block].steps[r.step];
  }
  const ThreadBlock &block(StepRef r) const {
    return gpuList[r.gpu].blocks[r.block];
  }
};

/// Reports a problem at an element's attribute (null: the element itself).
using Report = std::function<void(const xml::Element &element,
                                  const xml::Attribute *attribute,
                                  const std::string &message)>;

/// The algorithm of `root`, or nothing after reporting every problem found
/// (each once, in document order).
std::optional<Algorithm> read(const xml::Element &root, const Report &report);

} // namespace sdma::msccl

#endif // SDMA_LIB_TARGET_MSCCL_MSCCLALGO_H
