//===- TranslateToJSON.cpp - flat schedules as JSON -----------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Format (version 1), documented in README.md:
//   {"format": "sdma.schedule", "version": 1, "schedules": [
//     {"name": ..., "ranks": R, "buffers": [{"name": ..., "chunks": N}],
//      "ops": [{"op": "copy", "rank": issuer, "src": slice, "dst": slice
//               [, "pull": true]},
//              {"op": "bcast", "rank": issuer, "src": slice,
//               "dst": [slice, slice]},
//              {"op": "swap", "rank": issuer, "a": slice, "b": slice},
//              {"op": "fence", "rank": r}   (no "rank": every rank),
//              {"op": "signal", "rank": from, "to": r, "tag": t},
//              {"op": "wait", "rank": r, "from": from, "tag": t},
//              {"op": "barrier"}]}]}
//   slice = {"rank": r, "buffer": name, "offset": chunks, "count": chunks}
// Data ops with an engine also carry "engine": E (ops of one rank on one
// engine run in program order).
//
//===----------------------------------------------------------------------===//

#include "sdma/IR/SdmaOps.h"
#include "sdma/InitAllDialects.h"
#include "sdma/Target/JSON.h"
#include "sdma/Target/Manifest.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/TypeSwitch.h"
#include <nlohmann/json.hpp>

using namespace mlir;
using namespace sdma;
using json = nlohmann::ordered_json;

static FailureOr<json> opToJSON(ScheduleOp schedule, Operation *op) {
  auto fields = dyn_cast<FieldsOpInterface>(op);
  if ((fields && !fields.hasStaticFields()) ||
      !isa<TransferOpInterface, FenceOp, SignalOp, WaitOp, BarrierOp>(op))
    return op->emitOpError("is not part of a flat schedule: run sdma-unroll "
                           "before --sdma-to-json");
  auto slice = [&](unsigned i) {
    return sliceToJSON(schedule,
                       *getStaticSlice(cast<TransferOpInterface>(op), i));
  };
  return llvm::TypeSwitch<Operation *, json>(op)
      .Case([&](CopyOp copy) {
        json j{{"op", "copy"}, {"rank", slice(copy.getIssuingSlice())["rank"]}};
        j["src"] = slice(0);
        j["dst"] = slice(1);
        if (copy.getPull())
          j["pull"] = true;
        return j;
      })
      .Case([&](BcastOp) {
        json j{{"op", "bcast"}, {"rank", slice(0)["rank"]}};
        j["src"] = slice(0);
        j["dst"] = json::array({slice(1), slice(2)});
        return j;
      })
      .Case([&](SwapOp) {
        json j{{"op", "swap"}, {"rank", slice(0)["rank"]}};
        j["a"] = slice(0);
        j["b"] = slice(1);
        return j;
      })
      .Case([&](FenceOp fence) {
        json j{{"op", "fence"}};
        if (fence.hasRank())
          j["rank"] = *fence.getConstantField(0);
        return j;
      })
      .Case([&](SignalOp signal) {
        return json{{"op", "signal"},
                    {"rank", *signal.getConstantField(0)},
                    {"to", *signal.getConstantField(1)},
                    {"tag", signal.getTag()}};
      })
      .Case([&](WaitOp wait) {
        return json{{"op", "wait"},
                    {"rank", *wait.getConstantField(0)},
                    {"from", *wait.getConstantField(1)},
                    {"tag", wait.getTag()}};
      })
      .Default([](Operation *) {
        return json{{"op", "barrier"}};
      });
}

LogicalResult sdma::translateToJSON(ModuleOp module, raw_ostream &os) {
  json schedules = json::array();
  for (ScheduleOp schedule : module.getOps<ScheduleOp>()) {
    if (!schedule.getRanks())
      return schedule.emitOpError("has no fixed rank count: run sdma-unroll "
                                  "before --sdma-to-json");
    int64_t ranks = *schedule.getRanks();
    json buffers = buffersToJSON(schedule);
    json ops = json::array();
    for (Operation &op : schedule.getBody().getOps()) {
      FailureOr<json> j = opToJSON(schedule, &op);
      if (failed(j))
        return failure();
      // The queue of a data op is part of its ordering (engine order).
      if (auto engine = op.getAttrOfType<IntegerAttr>("engine"))
        (*j)["engine"] = engine.getInt();
      ops.push_back(std::move(*j));
    }
    schedules.push_back(json{{"name", schedule.getSymName().str()},
                             {"ranks", ranks},
                             {"buffers", std::move(buffers)},
                             {"ops", std::move(ops)}});
  }
  json root{{"format", "sdma.schedule"},
            {"version", kScheduleJSONVersion},
            {"schedules", std::move(schedules)}};
  os << root.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  return success();
}

void sdma::registerToJSONTranslation() {
  TranslateFromMLIRRegistration registration(
      "sdma-to-json", "write flat sdma schedules as JSON",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return translateToJSON(module, os);
      },
      // Non-flat schedules must parse to be reported as such.
      registerAllDialects);
}
