// RUN: sdma-opt %s --sdma-assign-engines -verify-diagnostics
// RUN: not sdma-opt %schedules/all_reduce_one_shot.mlir --sdma-lower-dma=ranks=4 2>&1 | FileCheck %s
// DMA engines move bytes: a reduction cannot go into a DMA plan. A clear
// refusal, not a plan that drops the arithmetic.

sdma.schedule @s ranks(%R = 2) buffers(%a : f32[2]) {
  // expected-error @+1 {{combines values (a sum), which DMA engines cannot do: run this schedule as a load/store kernel (--sdma-to-hip), where compute units do the arithmetic}}
  sdma.reduce sum %a[0, 1] on 0 <- %a[1, 1] on 1
}

// CHECK: error: 'sdma.reduce' op combines values (a sum), which DMA engines cannot do
