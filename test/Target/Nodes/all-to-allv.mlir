// The hierarchical all-to-allv (capacity slots, counts carried with the
// rows) is proved at ten (nodes x local ranks) shapes of 2-9 ranks (two of
// them one node), as the verifier follows each segment from the input
// through the staging buffers to the output; split into two local phases
// around one network phase; mutants refused naming the rows.
// RUN: for rg in 2:1 2:2 3:1 4:2 4:4 6:2 6:3 8:2 8:4 9:3; do sdma-opt %schedules/hier/all_to_allv.mlir --sdma-unroll="ranks=${rg%%:*} local-ranks=${rg##*:}" --sdma-verify 2>&1 >/dev/null; done | FileCheck %s --check-prefix=PROVED
// PROVED-COUNT-10: implements all_to_allv(input -> output) counts(send_counts -> recv_counts) for every count
// PROVED-NOT: error

// RUN: sdma-opt %schedules/hier/all_to_allv.mlir --sdma-unroll="ranks=4 local-ranks=2" | sdma-translate --sdma-to-node-plan | %python -c "import json, sys; [print(json.dumps(p, sort_keys=True)) for p in json.load(sys.stdin)['phases']]" | FileCheck %s --check-prefix=PLAN
// PLAN: "kind": "local"
// PLAN: sdma.copyv %input[2] on 0 -> %staged[2] on 0, count %send_counts[2] on 0 max 1
// PLAN: "kind": "network"
// PLAN-SAME: {"dst": {"buffer": "recv_counts", "count": 2, "offset": 0, "rank": 2}, "src": {"buffer": "staged_counts", "count": 2, "offset": 2, "rank": 0}}
// PLAN-SAME: {"dst": {"buffer": "landing", "count": 2, "offset": 0, "rank": 2}, "src": {"buffer": "staged", "count": 2, "offset": 2, "rank": 0}}
// PLAN: "kind": "local"
// PLAN: sdma.copyv %landing[2] on 0 -> %output[2] on 0, count %recv_counts[2] on 0 max 1

// Mutants.
// RUN: grep -v "sdma.copy %%staged_counts\[%%mbase" %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCOUNTS
// NOCOUNTS: 'sdma.copyv' op reads its count from recv_counts[1] of rank 3, which nothing wrote
// RUN: sed 's/count %%recv_counts\[%%s\] on %%p max 1/count %%send_counts[%%s] on %%p max 1/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRONGCOUNT
// WRONGCOUNT: 'sdma.copyv' op reads its count from send_counts[1] of rank 3, which holds send_counts[1] of rank 3, but 'landing[1]' of rank 3 holds a segment of send_counts[3] of rank 1 rows
// RUN: grep -v sdma.barrier %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBARRIER
// NOBARRIER: 'sdma.copy' op races with another op: it reads staged[2, 3) on rank 0
// RUN: sed 's/-> %%landing\[%%nbase, %%G\]/-> %%landing[%%mbase, %%G]/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISLANDED
// MISLANDED: 'sdma.copyv' op reads rows from 'landing[1]' of rank 3, where no sdma.copyv (or a copy of one) left a segment
// RUN: sed 's/-> %%landing\[%%nbase, %%G\]/-> %%output[%%nbase, %%G]/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIRECT
// DIRECT: 'sdma.copy' op writes 'output', which this all_to_allv fills with sdma.copyv
// RUN: sed 's/sdma.copy %%staged\[%%mbase, %%G\] on %%r/sdma.copy %%input[%%mbase, %%G] on %%r/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNSTAGED
// UNSTAGED: 'sdma.copyv' op reads rows from 'landing[1]' of rank 3, where no sdma.copyv (or a copy of one) left a segment
// RUN: sed 's/-> %%output\[%%s\] on %%p,/-> %%input[%%s] on %%p,/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: 'sdma.copyv' op writes 'input', the input of this all_to_allv
// RUN: sed 's/sdma.copyv %%landing\[%%s\] on %%p/sdma.copyv %%landing[packed %%recv_counts[%%s] on %%p] on %%p/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=PACKED
// PACKED: 'sdma.copyv' op stages rows in 'landing' at offsets read from a table: the verifier follows staged segments in fixed slots only
// RUN: sed 's/sdma.copy %%staged\[%%mbase, %%G\] on %%r -> %%landing\[%%nbase, %%G\]/sdma.copy %%staged[%%mbase, 1] on %%r -> %%landing[%%nbase, 1]/' %schedules/hier/all_to_allv.mlir | not sdma-opt --sdma-unroll="ranks=4 local-ranks=2" --sdma-verify -o /dev/null 2>&1 | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: 'sdma.copyv' op reads rows from 'landing[1]' of rank 3, where no sdma.copyv (or a copy of one) left a segment
