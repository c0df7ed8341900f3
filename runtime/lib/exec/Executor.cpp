//===- Executor.cpp - the executor interface's shared parts ---------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "sdma/runtime/Executor.h"

using namespace sdma::rt;

Executor::~Executor() = default;

std::optional<CompiledSchedule>
CompiledSchedule::parse(std::string_view planText, std::string ldstSource,
                        std::string_view packetsText, std::string &error) {
  // No plan (a schedule that reduces, or reads counts at run time): the
  // load/store program alone, its layout standing in for the plan.
  if (planText.empty() && !ldstSource.empty()) {
    std::optional<LdstProgram> ldst =
        LdstProgram::parse(std::move(ldstSource), error);
    if (!ldst)
      return std::nullopt;
    Plan layout = ldst->layout();
    return CompiledSchedule{std::move(layout), std::move(ldst), std::nullopt};
  }
  std::optional<Plan> plan = Plan::parse(planText, error);
  if (!plan) {
    error = "the plan: " + error;
    return std::nullopt;
  }
  CompiledSchedule compiled{std::move(*plan), std::nullopt, std::nullopt};
  if (!ldstSource.empty()) {
    compiled.ldst = LdstProgram::parse(std::move(ldstSource), error);
    if (!compiled.ldst)
      return std::nullopt;
  }
  if (!packetsText.empty()) {
    compiled.packets = PacketPlan::parse(packetsText, error);
    if (!compiled.packets) {
      error = "the packet plan: " + error;
      return std::nullopt;
    }
  }
  return compiled;
}
