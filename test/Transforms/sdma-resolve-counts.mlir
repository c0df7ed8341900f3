// sdma-resolve-counts: with the counts the host knows, each sdma.copyv
// becomes the copy it is (none for a count of 0) and the count exchange
// goes; offsets follow each form (packed prefix, padded expert-major, at).
// RUN: rm -rf %t && mkdir -p %t
// RUN: echo '{"send_counts": [[1, 1], [0, 1]]}' > %t/packed.json
// RUN: sdma-opt %schedules/all_to_allv_packed.mlir --sdma-unroll=ranks=2 --sdma-resolve-counts=counts=%t/packed.json | FileCheck %s --check-prefix=PACKED
// Rank 0 sends a row to itself and one to rank 1; rank 1 one to itself,
// after rank 0's.
// PACKED-NOT:  sdma.copy %send_counts
// PACKED-NOT:  sdma.barrier
// PACKED:      sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// PACKED-NEXT: sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1
// PACKED-NEXT: sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1
// PACKED-NOT:  sdma.copyv
//
// The dispatch into expert-major rows, 4 ranks x 2 experts, groups padded
// to 2 rows: on rank 0, expert 0's one row (from rank 0) is padded to 2, so
// expert 1's row from rank 1 lands at 2.
// RUN: echo '{"send_counts": [[1,0,1,0,0,0,0,1],[0,1,0,0,1,0,0,0],[0,0,1,0,0,0,0,0],[0,0,0,0,0,0,0,0]]}' > %t/2d.json
// RUN: sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=4 experts=2 major-align=2" --sdma-resolve-counts=counts=%t/2d.json | FileCheck %s --check-prefix=TWOD
// TWOD:      sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
// TWOD-NEXT: sdma.copy %input[1, 1] on 0 -> %output[0, 1] on 1
// TWOD-NEXT: sdma.copy %input[2, 1] on 0 -> %output[2, 1] on 3
// TWOD-NEXT: sdma.copy %input[0, 1] on 1 -> %output[2, 1] on 0
// TWOD-NEXT: sdma.copy %input[1, 1] on 1 -> %output[0, 1] on 2
// TWOD-NEXT: sdma.copy %input[0, 1] on 2 -> %output[1, 1] on 1
// TWOD-NOT:  sdma.copy
//
// The combine reads each segment at the offset its table gives; an empty
// split's offset is not used (99 and -1 here, as torch ignores them). Its
// copyvs are pulls, and so are the copies they become.
// RUN: echo '{"send_counts": [[1,0,0,0,0,1,0,0,0,99,99,99,2,3,-1,99],[1,0,1,0,0,0,0,0,0,99,1,99,99,99,99,99],[0,0,0,0,0,0,0,0,99,99,99,99,99,99,99,99],[0,0,0,0,1,0,0,0,99,99,99,99,0,99,99,99]]}' > %t/offset.json
// RUN: sdma-opt %schedules/all_to_allv_2d_offset.mlir --sdma-unroll="ranks=4 experts=2" --sdma-resolve-counts=counts=%t/offset.json | FileCheck %s --check-prefix=BACK
// BACK:      sdma.copy pull %input[0, 1] on 0 -> %output[0, 1] on 0
// BACK-NEXT: sdma.copy pull %input[3, 1] on 0 -> %output[0, 1] on 1
// BACK-NEXT: sdma.copy pull %input[0, 1] on 1 -> %output[1, 1] on 0
// BACK-NEXT: sdma.copy pull %input[1, 1] on 1 -> %output[0, 1] on 2
// BACK-NEXT: sdma.copy pull %input[0, 1] on 3 -> %output[2, 1] on 0
// BACK-NOT:  sdma.copy
//
// Counts out of range are errors naming the ranks, as at run time.
// RUN: echo '{"send_counts": [[0, 2], [0, 0]]}' > %t/over.json
// RUN: not sdma-opt %schedules/all_to_allv_slots.mlir --sdma-unroll=ranks=2 --sdma-resolve-counts=counts=%t/over.json 2>&1 | FileCheck %s --check-prefix=OVER
// OVER: error: 'sdma.copyv' op rank 0 was to send 2 rows to rank 1, more than its capacity of 1
// RUN: echo '{"send_counts": [[1, 1, 1, 1], [0, 0, 0, 0]]}' > %t/past.json
// RUN: not sdma-opt %schedules/all_to_allv_2d.mlir --sdma-unroll="ranks=2 experts=2" --sdma-resolve-counts=counts=%t/past.json 2>&1 | FileCheck %s --check-prefix=PAST
// PAST: error: 'sdma.copyv' op rank 0's 1 rows for rank 1 lie at {{[23]}} of 'input' (2 rows) and go to {{[01]}} of 'output' (2 rows): past the end
// RUN: echo '{"send_counts": [[1]]}' > %t/shape.json
// RUN: not sdma-opt %schedules/all_to_allv_packed.mlir --sdma-unroll=ranks=2 --sdma-resolve-counts=counts=%t/shape.json 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: 'sdma.schedule' op count table 'send_counts' has 2 entries on each of 2 ranks, but the counts given do not have that shape
// RUN: echo 'nope' > %t/bad.json
// RUN: not sdma-opt %schedules/all_to_allv_packed.mlir --sdma-unroll=ranks=2 --sdma-resolve-counts=counts=%t/bad.json 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: sdma-resolve-counts: '{{.*}}bad.json' is not a JSON object of count tables
