// RUN: sdma-opt %schedules/broadcast.mlir --sdma-unroll=ranks=8 --sdma-verify | FileCheck %s --check-prefix=BCAST
// RUN: sdma-opt %schedules/scatter.mlir --sdma-unroll=ranks=8 --sdma-verify | FileCheck %s --check-prefix=SCATTER
// RUN: sdma-opt %schedules/gather.mlir --sdma-unroll=ranks=8 --sdma-verify | FileCheck %s --check-prefix=GATHER

// BCAST-LABEL: sdma.schedule @broadcast ranks(%R = 8) buffers(%input : 1, %output : 1) implements broadcast(%input -> %output) root 0
// BCAST-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// BCAST-COUNT-6: sdma.copy %input[0, 1] on 0 -> %output[0, 1] on
// BCAST-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 7
// BCAST-NEXT:  }

// SCATTER-LABEL: sdma.schedule @scatter ranks(%R = 8) buffers(%input : 8, %output : 1) implements scatter(%input -> %output) root 0
// SCATTER-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// SCATTER-NEXT:    sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1
// SCATTER-COUNT-5: sdma.copy
// SCATTER-NEXT:    sdma.copy %input[7, 1] on 0 -> %output[0, 1] on 7
// SCATTER-NEXT:  }

// GATHER-LABEL: sdma.schedule @gather ranks(%R = 8) buffers(%input : 1, %output : 8) implements gather(%input -> %output) root 0
// GATHER-NEXT:    sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// GATHER-NEXT:    sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 0
// GATHER-COUNT-5: sdma.copy
// GATHER-NEXT:    sdma.copy %input[0, 1] on 7 -> %output[7, 1] on 0
// GATHER-NEXT:  }
