// The staged table kernel resolves up to SDMA_STAGE_CAP ops of a phase per
// window (LdstKernel.hip: 64 by default); each window is a resolve round
// and a drain every block of the rank waits for. The emitter raises the
// cap to the largest phase (rounded up to 32) where static shared memory
// allows: at 8 ranks x 12 experts a rank's one phase (its 96 count puts
// and 96 expert segments, forwarded) resolves in one window of 192; at 8 x
// 32 (512 ops) the scan of nine 256-entry tables leaves room for windows
// of 288. A program whose phases fit 64 ops gets no define of its own.
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=8 experts=32 major-align=128" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=E32
// E32: #ifndef SDMA_STAGE_CAP
// E32-NEXT: #define SDMA_STAGE_CAP 288
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=8 experts=12 major-align=4" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=E12
// E12: #ifndef SDMA_STAGE_CAP
// E12-NEXT: #define SDMA_STAGE_CAP 192
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=2 experts=2 major-align=4" | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=SMALL
// SMALL: #ifndef SDMA_STAGE_CAP
// SMALL-NEXT: #define SDMA_STAGE_CAP 64
// SMALL-NEXT: #endif
