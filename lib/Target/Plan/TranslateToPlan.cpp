//===- TranslateToPlan.cpp - engine-level schedule -> runtime plan --------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The plan (version 1) is the only contract between compiler and runtime;
// README.md documents it and runtime/lib/format/Plan.cpp reads it.
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/Manifest.h"
#include "sdma/Target/Plan.h"
#include "sdma/Target/Verified.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include <map>
#include <nlohmann/json.hpp>

using namespace mlir;
using namespace sdma;
using json = nlohmann::ordered_json;

static json sliceJSON(ScheduleOp schedule, const Slice &slice) {
  return sdma::sliceToJSON(schedule, *getStaticSlice(slice));
}

LogicalResult sdma::translateToPlan(ModuleOp module, raw_ostream &os) {
  auto schedules = llvm::to_vector(module.getOps<ScheduleOp>());
  if (schedules.size() != 1)
    return module.emitError("expected exactly one sdma.schedule, found ")
           << schedules.size();
  ScheduleOp schedule = schedules.front();
  if (!schedule.getRanks())
    return schedule.emitOpError("has no fixed rank count: lower it (sdma-"
                                "unroll ... sdma-insert-sync) first");
  int64_t ranks = *schedule.getRanks();

  std::map<std::pair<int64_t, int64_t>, json> queues;
  std::vector<int64_t> done(ranks, 0);
  int64_t numFlags = 2;
  bool prelaunch = false;
  for (Operation &op : schedule.getBody().getOps()) {
    json command;
    int64_t rank, engine;
    if (auto transfer = dyn_cast<TransferOpInterface>(&op)) {
      auto engineAttr = op.getAttrOfType<IntegerAttr>("engine");
      if (!engineAttr || !cast<FieldsOpInterface>(&op).hasStaticFields())
        return op.emitOpError("is not engine-level: run sdma-assign-engines "
                              "and sdma-insert-sync before --sdma-to-plan");
      rank = *getConstantIntValue(transfer.getIssuingRankField());
      engine = engineAttr.getInt();
      if (auto copy = dyn_cast<CopyOp>(op)) {
        command = json{{"op", "copy"},
                       {"src", sliceJSON(schedule, transfer.getSlice(0))},
                       {"dst", sliceJSON(schedule, transfer.getSlice(1))}};
        if (copy.getPull())
          command["pull"] = true;
      } else if (isa<BcastOp>(op))
        command = json{
            {"op", "bcast"},
            {"src", sliceJSON(schedule, transfer.getSlice(0))},
            {"dst", json::array({sliceJSON(schedule, transfer.getSlice(1)),
                                 sliceJSON(schedule, transfer.getSlice(2))})}};
      else
        command = json{{"op", "swap"},
                       {"a", sliceJSON(schedule, transfer.getSlice(0))},
                       {"b", sliceJSON(schedule, transfer.getSlice(1))}};
    } else if (auto notify = dyn_cast<NotifyOp>(&op)) {
      rank = notify.getRank();
      engine = notify.getEngine();
      command = json{{"op", "notify"},
                     {"rank", notify.getTarget()},
                     {"flag", notify.getFlag()}};
      numFlags = std::max<int64_t>(numFlags, notify.getFlag() + 1);
      if (notify.getFlag() == 1)
        ++done[notify.getTarget()];
    } else if (auto poll = dyn_cast<PollOp>(&op)) {
      rank = poll.getRank();
      engine = poll.getEngine();
      command = json{
          {"op", "poll"}, {"flag", poll.getFlag()}, {"value", poll.getValue()}};
      numFlags = std::max<int64_t>(numFlags, poll.getFlag() + 1);
      prelaunch |= poll.getFlag() == 0;
    } else {
      return op.emitOpError("is not engine-level: run sdma-assign-engines "
                            "and sdma-insert-sync before --sdma-to-plan");
    }
    json &queue = queues[{rank, engine}];
    if (queue.is_null())
      queue = json{{"rank", rank}, {"engine", engine}, {"ops", json::array()}};
    queue["ops"].push_back(std::move(command));
  }

  json buffers = buffersToJSON(schedule);
  json collective = collectiveToJSON(schedule);
  json streams = json::array();
  int64_t engines = 0;
  for (auto &[key, queue] : queues) {
    engines = std::max(engines, key.second + 1);
    streams.push_back(std::move(queue));
  }
  json plan{{"format", "sdma.plan"},
            {"version", kPlanVersion},
            {"schedule", schedule.getSymName().str()},
            {"ranks", ranks},
            {"collective", std::move(collective)},
            {"buffers", std::move(buffers)},
            {"engines", engines},
            {"flags", numFlags},
            {"prelaunch", prelaunch},
            {"done", done},
            {"streams", std::move(streams)}};
  os << plan.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  return success();
}

void sdma::registerToPlanTranslation() {
  TranslateFromMLIRRegistration registration(
      "sdma-to-plan", "write an engine-level sdma schedule as a runtime plan",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        if (failed(verifyBeforeTranslation(module)))
          return failure();
        return translateToPlan(module, os);
      },
      registerAllDialects);
}
