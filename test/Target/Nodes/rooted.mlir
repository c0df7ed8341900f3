// The rooted hierarchical collectives (broadcast, reduce, gather, scatter)
// are proved at every root of several (nodes x local ranks) shapes, and
// split into network and node phases; mutants are refused.
// RUN: for rg in 2:1 4:2 6:3 6:2 8:4 9:3; do r=${rg%%:*}; for k in $(seq 0 $((r - 1))); do sdma-opt %schedules/hier/broadcast.mlir --sdma-unroll="ranks=$r local-ranks=${rg##*:} root=$k" --sdma-verify 2>&1 >/dev/null; done; done | FileCheck %s --check-prefix=BCAST
// BCAST-COUNT-35: implements broadcast(input -> output) root
// BCAST-NOT: error
// RUN: for rg in 2:1 4:2 6:3 6:2 8:4 9:3; do r=${rg%%:*}; for k in $(seq 0 $((r - 1))); do sdma-opt %schedules/hier/reduce.mlir --sdma-unroll="ranks=$r local-ranks=${rg##*:} root=$k" --sdma-verify 2>&1 >/dev/null; done; done | FileCheck %s --check-prefix=REDUCE
// REDUCE-COUNT-35: implements reduce(input -> output) root
// REDUCE-NOT: error
// RUN: for s in gather scatter; do for rg in 2:1 4:2 6:3 6:2 8:4 9:3; do r=${rg%%:*}; for k in $(seq 0 $((r - 1))); do sdma-opt %schedules/hier/$s.mlir --sdma-unroll="ranks=$r local-ranks=${rg##*:} root=$k" --sdma-verify 2>&1 >/dev/null; done; done; done | FileCheck %s --check-prefix=GS
// GS-COUNT-35: implements gather(input -> output) root
// GS-COUNT-35: implements scatter(input -> output) root
// GS-NOT: error

// RUN: sdma-opt %schedules/hier/broadcast.mlir --sdma-unroll="ranks=6 local-ranks=2 root=3" | sdma-translate --sdma-to-node-plan | %python -c "import json, sys; [print(json.dumps(p, sort_keys=True)) for p in json.load(sys.stdin)['phases']]" | FileCheck %s --check-prefix=PLAN
// PLAN: "kind": "network", "transfers": [{"dst": {"buffer": "output", "count": 1, "offset": 0, "rank": 1}, "src": {"buffer": "input", "count": 1, "offset": 0, "rank": 3}}, {"dst": {"buffer": "output", "count": 1, "offset": 0, "rank": 5}, "src": {"buffer": "input", "count": 1, "offset": 0, "rank": 3}}]
// PLAN: "kind": "local"

// Mutants: the node phase reads the chunk before it has landed (no
// barrier); the partials reach the root on the wrong rail.
// RUN: grep -v sdma.barrier %schedules/hier/broadcast.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2 root=1" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBARRIER
// NOBARRIER: 'sdma.copy' op races with another op: it reads output[0, 1) on rank 3
// RUN: sed 's/%%q = arith.addi %%mbase, %%l : index/%%q = arith.addi %%mbase, %%a : index/' %schedules/hier/reduce.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2 root=1" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=RAIL
// RAIL: 'sdma.schedule' op does not implement reduce: afterwards chunk 0 of output on rank 1 holds a sum over a chunk never written
