// An all-gather every rank pulls (sdma.copy pull: the destination's rank
// issues each copy). Its plan puts each pull in the queue of the rank it
// lands on and marks it "pull"; the loader accepts that (the schema test
// validates it), and every CPU-side backend moves the same bytes as the
// reference simulator: the plan, the AMD packet program, and the
// load/store kernel (where each rank's steps hold its own pulls).
// RUN: sdma-opt %s --sdma-unroll=ranks=2 --sdma-verify=report=0 --sdma-lower-dma | sdma-translate --sdma-to-plan | FileCheck %s
// Rank 0's pull from rank 1 goes on its engine 0, its local pull on its
// last (affinity, sdma-assign-engines-pull.mlir), each in rank 0's queues.
// CHECK:      "streams": [
// CHECK-NEXT:  {
// CHECK-NEXT:   "rank": 0,
// CHECK-NEXT:   "engine": 0,
// CHECK-NEXT:   "ops": [
// CHECK-NEXT:    {
// CHECK-NEXT:     "op": "copy",
// CHECK-NEXT:     "src": {
// CHECK-NEXT:      "rank": 1,
// CHECK:          "dst": {
// CHECK-NEXT:      "rank": 0,
// CHECK:          "pull": true
// CHECK:        "engine": 1,
// CHECK-NEXT:   "ops": [
// CHECK-NEXT:    {
// CHECK-NEXT:     "op": "copy",
// CHECK-NEXT:     "src": {
// CHECK-NEXT:      "rank": 0,
// CHECK:          "dst": {
// CHECK-NEXT:      "rank": 0,
// CHECK:          "pull": true
// CHECK:        "rank": 1,
// CHECK-NEXT:   "engine": 0,
// CHECK-NEXT:   "ops": [
// CHECK-NEXT:    {
// CHECK-NEXT:     "op": "copy",
// CHECK-NEXT:     "src": {
// CHECK-NEXT:      "rank": 0,
// RUN: sdma-run %s --ranks=3 --backend=sim -b 1K -e 4K --iters=1 | FileCheck %s --check-prefix=EXEC
// RUN: sdma-run %s --ranks=3 --backend=sdma-packets -b 1K -e 4K --iters=1 | FileCheck %s --check-prefix=EXEC
// RUN: sdma-run %s --ranks=3 --backend=ldst-cpu -b 1K -e 4K --iters=1 | FileCheck %s --check-prefix=EXEC
// EXEC-LABEL: proved for 3 ranks: 9 data ops race-free
// EXEC: #wrong
// EXEC-NEXT: {{ +}}1023 {{.*}} 0{{$}}
// EXEC-NEXT: {{ +}}4095 {{.*}} 0{{$}}
//
// The schedule JSON names the issuing rank and says it is a pull.
// RUN: sdma-opt %s --sdma-unroll=ranks=3 | sdma-translate --sdma-to-json | FileCheck %s --check-prefix=JSON
// JSON:      "op": "copy",
// JSON-NEXT: "rank": 0,
// JSON:      "pull": true
// JSON:      "op": "copy",
// JSON-NEXT: "rank": 0,
// JSON-NEXT: "src": {
// JSON-NEXT:   "rank": 1,
// JSON:      "pull": true
//
// RUN: sdma-opt %s --sdma-unroll=ranks=3 | sdma-translate --sdma-to-hip | FileCheck %s --check-prefix=HIP
// Rank 0's steps hold its three pulls (one phase, ops 0-2), each reading
// rank p's input into output chunk p of rank 0.
// HIP: sdma_ops[] = {
// HIP-NEXT: 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0,
// HIP-NEXT: 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0,
// HIP-NEXT: 0, 2, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0,
// HIP: sdma_steps[] = {
// HIP-NEXT: 0, 0, 3, 0, 3, 3, 0, 6, 3,};
sdma.schedule @pull_gather ranks(%R) buffers(%in : 1, %out : ranks)
    implements all_gather(%in -> %out) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy pull %in[0, 1] on %p -> %out[%p, 1] on %r
    }
  }
}
