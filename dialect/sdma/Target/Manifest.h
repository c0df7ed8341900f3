//===- Manifest.h - what every emitted artifact says about its schedule -*- C++
//-*-//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The plan and the load/store program both describe the schedule's buffers
// and collective the same way; the runtime reads both with the same rules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_MANIFEST_H
#define SDMA_TARGET_MANIFEST_H

#include "sdma/IR/SdmaOps.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace sdma {

/// {"rank", "buffer", "offset", "count"} of a flat slice.
inline nlohmann::ordered_json sliceToJSON(ScheduleOp schedule,
                                          const StaticSlice &slice) {
  return {{"rank", slice.rank},
          {"buffer", schedule.getBufferName(slice.buffer).str()},
          {"offset", slice.offset},
          {"count", slice.count}};
}

/// [{"name": ..., "chunks": ...}] for a schedule with a fixed rank count.
inline nlohmann::ordered_json buffersToJSON(ScheduleOp schedule) {
  nlohmann::ordered_json buffers = nlohmann::ordered_json::array();
  for (mlir::BlockArgument buffer : schedule.getBufferArgs()) {
    nlohmann::ordered_json entry{
        {"name", schedule.getBufferName(buffer).str()},
        {"chunks", *schedule.getBufferChunks(buffer, schedule.getRanks())}};
    // A count table's unit is one 64-bit integer, not a chunk.
    if (schedule.isCountBuffer(buffer))
      entry["counts"] = true;
    // A typed buffer's element type: "f32", "f16", "bf16", "i32", "i64".
    if (mlir::Type type = schedule.getBufferElementType(buffer)) {
      std::string name;
      llvm::raw_string_ostream(name) << type;
      entry["type"] = name;
    }
    buffers.push_back(std::move(entry));
  }
  return buffers;
}

/// {"kind", "input", "output"[, "root"][, "send_counts", "recv_counts"]
/// [, "experts", "major_align"]}, or null without `implements`.
inline nlohmann::ordered_json collectiveToJSON(ScheduleOp schedule) {
  std::optional<llvm::StringRef> kind = schedule.getCollective();
  if (!kind)
    return nullptr;
  auto name = [&](unsigned index) {
    return schedule.getBufferName(schedule.getBufferArgs()[index]).str();
  };
  nlohmann::ordered_json collective{
      {"kind", kind->str()},
      {"input", name(*schedule.getCollectiveInput())},
      {"output", name(*schedule.getCollectiveOutput())}};
  if (std::optional<int64_t> root = schedule.getRoot())
    collective["root"] = *root;
  if (std::optional<unsigned> send = schedule.getCollectiveSendCounts())
    collective["send_counts"] = name(*send);
  if (std::optional<unsigned> recv = schedule.getCollectiveRecvCounts())
    collective["recv_counts"] = name(*recv);
  if (kind->starts_with("all_to_allv_2d")) {
    collective["experts"] = schedule.getExpertCount().value_or(1);
    collective["major_align"] = schedule.getMajorAlignment();
  }
  return collective;
}

} // namespace sdma

#endif // SDMA_TARGET_MANIFEST_H
