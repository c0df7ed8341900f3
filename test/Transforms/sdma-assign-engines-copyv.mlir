// RUN: sdma-opt %s --sdma-assign-engines -verify-diagnostics
// RUN: not sdma-opt %schedules/all_to_allv_slots.mlir --sdma-lower-dma=ranks=4 2>&1 | FileCheck %s
// A run-time count cannot go into a DMA plan: a clear refusal, not a plan
// that drops the op.

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{reads its count at run time, but DMA plans (copy engines, SDMA packets written by the host) need every size when they are built: run this schedule as a load/store kernel (--sdma-to-hip)}}
  sdma.copyv %in[0] on 0 -> %out[0] on 1, count %n[0] on 0 max 1
}

// CHECK: error: 'sdma.copyv' op reads its count at run time
