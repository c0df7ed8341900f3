//===- HostExecutors.h - the CPU backends as Executors ---------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// sim (the reference simulator), sdma-sim (the simulator, timed by the DMA
// model), sdma-packets (the AMD packet program on the packet simulator,
// timed by the DMA model over the packets) and ldst-cpu (the load/store
// kernel itself on the CPU). Each keeps its own copy of every rank's
// buffers, as a GPU executor keeps device memory.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_LIB_HOST_HOSTEXECUTORS_H
#define SDMA_RUNTIME_LIB_HOST_HOSTEXECUTORS_H

#include "sdma/runtime/Executor.h"

namespace sdma::rt {

std::unique_ptr<Executor> createSimExecutor(const CompiledSchedule &compiled,
                                            const ExecutorOptions &options,
                                            std::string &error);
std::unique_ptr<Executor>
createDmaModelExecutor(const CompiledSchedule &compiled,
                       const ExecutorOptions &options, std::string &error);
std::unique_ptr<Executor>
createPacketSimExecutor(const CompiledSchedule &compiled,
                        const ExecutorOptions &options, std::string &error);
std::unique_ptr<Executor>
createLdstCpuExecutor(const CompiledSchedule &compiled,
                      const ExecutorOptions &options, std::string &error);

} // namespace sdma::rt

#endif // SDMA_RUNTIME_LIB_HOST_HOSTEXECUTORS_H
