// RUN: sdma-translate --sdma-to-hip %s | FileCheck %s
// RUN: sdma-run %s --backend=ldst-cpu -b 1K -e 64K -f 8 --iters=3 | FileCheck %s --check-prefix=RUNS

// Engine order across a wait: a broadcast from rank 1 staged through y.
// Engine 0 of rank 1 writes y, then (after a wait) reads it. A wait is no
// sync of the rank's blocks (each block passes it on its own, others may
// still run the phase before), so the later op's phase needs a SYNC after
// the wait: rank 1 is PHASE(3 ops) WAIT SYNC PHASE(1 op). (Found by review:
// the kernel once ran the read right after the WAIT and got wrong bytes.)
// Steps are (kind, a, b): 0 phase, 1 sync, 2 signal, 3 wait.
// CHECK:      static __constant__ const int sdma_steps[] = {
// CHECK-NEXT:     1, 0, 0, 2, 1, 0, 0, 0, 3, 3, 0, 1,
// CHECK-NEXT:     1, 0, 0, 0, 3, 1,};
// RUNS: 1024 {{.*}} 0{{$}}
// RUNS: 8192 {{.*}} 0{{$}}
// RUNS: 65536 {{.*}} 0{{$}}
//
//   rank 1: x [a..h] -> w [a b c], y [a..h], z(0) [a..h]; wait; z(1) <- y
sdma.schedule @bcast_across_wait ranks(%R = 2) buffers(%x : 8, %z : 8, %y : 8, %w : 8)
    implements broadcast(%x -> %z) root 1 {
  sdma.copy %x[0, 3] on 1 -> %w[0, 3] on 1 {engine = 0 : i64}
  sdma.copy %x[0, 8] on 1 -> %y[0, 8] on 1 {engine = 0 : i64}
  sdma.copy %x[0, 8] on 1 -> %z[0, 8] on 0 {engine = 0 : i64}
  sdma.signal 0 -> 1 tag 1
  sdma.wait 1 <- 0 tag 1
  sdma.copy %y[0, 8] on 1 -> %z[0, 8] on 1 {engine = 0 : i64}
}
