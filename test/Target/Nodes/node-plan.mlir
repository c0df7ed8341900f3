// RUN: sdma-opt %schedules/hier/all_gather.mlir --sdma-unroll="ranks=4 local-ranks=2" | sdma-translate --sdma-to-node-plan | FileCheck %s
// Proved at 2-9 ranks, at every local rank count that divides them.
// RUN: for rg in 2:1 2:2 4:2 6:2 6:3 8:2 8:4 9:3; do sdma-opt %schedules/hier/all_gather.mlir --sdma-unroll="ranks=${rg%%:*} local-ranks=${rg##*:}" --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=PROVED
// RUN: for rg in 2:1 2:2 4:2 6:2 6:3 8:2 8:4 9:3; do sdma-opt %schedules/hier/reduce_scatter.mlir --sdma-unroll="ranks=${rg%%:*} local-ranks=${rg##*:}" --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=PROVED-RS
// RUN: for rg in 2:1 2:2 4:2 6:2 6:3 8:2 8:4 9:3; do sdma-opt %schedules/hier/all_reduce.mlir --sdma-unroll="ranks=${rg%%:*} local-ranks=${rg##*:}" --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=PROVED-AR
// RUN: for rg in 2:1 2:2 4:2 6:2 6:3 8:2 8:4 9:3; do sdma-opt %schedules/hier/all_to_all.mlir --sdma-unroll="ranks=${rg%%:*} local-ranks=${rg##*:}" --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=PROVED-A2A

// Two phases: the rails across nodes, then each node's copies (node 1's
// part of the flat schedule, ranks 2 and 3, as ranks 0 and 1).
// CHECK:      "format": "sdma.node-plan",
// CHECK:      "ranks": 4,
// CHECK-NEXT: "local_ranks": 2,
// CHECK-NEXT: "nodes": 2,
// CHECK:      "kind": "all_gather",
// CHECK:      "phases": [
// CHECK:        "kind": "network",
// CHECK-NEXT:   "transfers": [
// CHECK:          "src": {
// CHECK-NEXT:      "rank": 0,
// CHECK-NEXT:      "buffer": "input",
// CHECK:          "dst": {
// CHECK-NEXT:      "rank": 2,
// CHECK-NEXT:      "buffer": "output",
// CHECK-NEXT:      "offset": 0,
// CHECK:        "kind": "local",
// CHECK-NEXT:   "schedules": [
// CHECK-NEXT:    "sdma.schedule @all_gather_hier_node0_phase1 ranks(%R = 2) buffers(%input : 1, %output : 4) {\n  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0\n
// CHECK-NEXT:    "sdma.schedule @all_gather_hier_node1_phase1 ranks(%R = 2) buffers(%input : 1, %output : 4) {\n  sdma.copy %input[0, 1] on 0 -> %output[2, 1] on 0\n

// PROVED-COUNT-8: implements all_gather(input -> output)
// PROVED-A2A-COUNT-8: implements all_to_all(input -> output)
// PROVED-RS-COUNT-8: implements reduce_scatter(input -> output) with sum
// PROVED-AR-COUNT-8: implements all_reduce(input -> output) with sum
