// RUN: sdma-translate --sdma-to-hip %s | FileCheck %s
// RUN: sdma-opt --sdma-verify %s > /dev/null
// RUN: sdma-run %s --ranks=2 --backend=ldst-cpu -b 2K -e 64K -f 32 --iters=2 | FileCheck %s --check-prefix=RUNS

// Ops on one engine run in program order (sdma-verify's contract), so the
// load/store kernel keeps them apart where it matters. Rank 0's second op
// on engine 0 reads the stage its first op wrote: it starts a new phase
// after a sync, and the next op (engine 1) joins it. Rank 1's two ops on
// engine 0 read the same input and write different ranks: one phase.
//
// Steps are (kind, a, b): 0 = phase of b op rows from row a, 1 = sync.
// CHECK: "phases_per_rank":[2,1]
// CHECK:      static __constant__ const int sdma_steps[] = {
// CHECK-NEXT:     0, 0, 1, 1, 0, 0, 0, 1, 2, 0, 3, 2,};

// RUNS: 2048 {{.*}} 0{{$}}
// RUNS: 65536 {{.*}} 0{{$}}

// Before / after (x_r is rank r's input):
//   rank 0: in [x0]  tmp [  ]  out [  ][  ]  ->  tmp [x0]  out [x0][x1]
//   rank 1: in [x1]            out [  ][  ]  ->            out [x0][x1]
sdma.schedule @staged_all_gather ranks(%R = 2)
    buffers(%in : 1, %tmp : 1, %out : ranks)
    implements all_gather(%in -> %out) {
  sdma.copy %in[0, 1] on 0 -> %tmp[0, 1] on 0 {engine = 0 : i64}
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 1 {engine = 0 : i64}
  sdma.copy %tmp[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0 {engine = 1 : i64}
  sdma.copy %in[0, 1] on 1 -> %out[1, 1] on 0 {engine = 0 : i64}
}
