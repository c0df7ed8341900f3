// RUN: sdma-translate %s --sdma-to-node-plan | FileCheck %s
// A fence on every rank goes to each node's part; a node whose part would
// be that fence alone gets none (no kernel launched for nothing).

// CHECK:      "kind": "local",
// CHECK-NEXT: "schedules": [
// CHECK-NEXT:   "sdma.schedule @s_node0_phase0 ranks(%R = 2) buffers(%in : 1, %out : 1) {\n  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0\n  sdma.fence\n  sdma.copy %out[0, 1] on 0 -> %out[0, 1] on 1\n}\n",
// CHECK-NEXT:   ""
// CHECK-NEXT: ]
sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : 1) attributes {local_ranks = 2} {
  sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 0
  sdma.fence
  sdma.copy %out[0, 1] on 0 -> %out[0, 1] on 1
}
