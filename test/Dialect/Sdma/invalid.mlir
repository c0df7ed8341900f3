// RUN: sdma-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{rank count 0 is out of range [1, 65536]}}
sdma.schedule @s ranks(%R = 0) buffers(%b : 1) {}

// -----

// expected-error @+1 {{rank count 65537 is out of range [1, 65536]}}
sdma.schedule @s ranks(%R = 65537) buffers(%b : 1) {}

// -----

// expected-error @+1 {{buffer name "0" is not an identifier}}
sdma.schedule @s ranks(%R = 2) buffers(%0 : 1) {}

// -----

// expected-error @+1 {{buffer 'b' must have a positive size}}
sdma.schedule @s ranks(%R = 2) buffers(%b : 0) {}

// -----

// expected-error @+1 {{a buffer size of K x ranks or K x experts x ranks needs K >= 1}}
sdma.schedule @s ranks(%R = 2) buffers(%b : -3 x ranks) {}

// -----

// expected-error @+1 {{a buffer size of K x ranks or K x experts x ranks needs K >= 1}}
sdma.schedule @s ranks(%R = 2) buffers(%b : counts[0 x experts x ranks]) {}

// -----

// expected-error @+1 {{expert count 0 is out of range [1, 1024]}}
sdma.schedule @s ranks(%R = 2) buffers(%b : counts[experts x ranks]) attributes {experts = 0} {}

// -----

// expected-error @+1 {{major alignment 0 is out of range [1, 1048576] rows}}
sdma.schedule @s ranks(%R = 2) buffers(%b : 2) attributes {major_align = 0} {}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[4]) {
  // expected-error @+1 {{expects 'table_forms' to hold two forms (0 packed, 1 expert_major, 2 at) of table sides}}
  "sdma.copyv"(%in, %out, %n, %n, %n) <{static_fields = array<i64: 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>}> {max = 1 : i64, packed = array<i1: false, false>, table_forms = array<i64: 0, 1>} : (!sdma.buffer, !sdma.buffer, !sdma.buffer, !sdma.buffer, !sdma.buffer) -> ()
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[4]) {
  // expected-error @+1 {{expects 'forwarded' to hold two flags, set only on sides read packed or expert_major}}
  "sdma.copyv"(%in, %out, %n, %n, %n) <{static_fields = array<i64: 0, 0, 1, 0, 0, 0, 0, 0, 0, 0>}> {max = 1 : i64, packed = array<i1: false, false>, forwarded = array<i1: true, false>} : (!sdma.buffer, !sdma.buffer, !sdma.buffer, !sdma.buffer, !sdma.buffer) -> ()
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[4]) {
  // expected-error @+1 {{'at' reads one entry of its table; only packed and expert_major offsets may be forwarded}}
  sdma.copyv %in[at forwarded %n[1] on 0] on 0 -> %out[0] on 1, count %n[0] on 0 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[4]) {
  // expected-error @+1 {{source at index 4 is out of range of count table 'n', which has 4 entries}}
  sdma.copyv %in[at %n[4] on 0] on 0 -> %out[0] on 1, count %n[0] on 0 max 1
}

// -----

// expected-error @+1 {{buffer 'b' is larger than 1099511627776 chunks}}
sdma.schedule @s ranks(%R) buffers(%b : 1000000000 x ranks) {}

// -----

// expected-error @+1 {{buffer 'b' is larger than 1099511627776 chunks}}
sdma.schedule @s ranks(%R = 2) buffers(%b : 9223372036854775807 x ranks + 9) {}

// -----

// expected-error @+1 {{integer value too large}}
sdma.schedule @s ranks(%R = 2) buffers(%b : 99999999999999999999) {}

// -----

// expected-error @+1 {{expects the rank count as its first block argument}}
"sdma.schedule"() <{buffer_names = [], buffer_sizes = array<i64>, sym_name = "s"}> ({
^bb0(%b: !sdma.buffer):
}) : () -> ()

// -----

// expected-error @+1 {{expects a name and a size for each of its 1 buffers}}
"sdma.schedule"() <{buffer_names = [], buffer_sizes = array<i64: 0, 1>, sym_name = "s"}> ({
^bb0(%R: index, %b: !sdma.buffer):
}) : () -> ()

// -----

// expected-error @+1 {{block argument 1 must be an '!sdma.buffer', got 'index'}}
"sdma.schedule"() <{buffer_names = ["b"], buffer_sizes = array<i64: 0, 1>, sym_name = "s"}> ({
^bb0(%R: index, %b: index):
}) : () -> ()

// -----

// expected-error @+1 {{buffer 'b' is declared twice}}
"sdma.schedule"() <{buffer_names = ["b", "b"], buffer_sizes = array<i64: 0, 1, 0, 1>, sym_name = "s"}> ({
^bb0(%R: index, %b: !sdma.buffer, %c: !sdma.buffer):
}) : () -> ()

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{is not allowed in an 'sdma.schedule' (use sdma, arith, affine, scf or index ops)}}
  builtin.module {}
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{field value -9223372036854775808 is out of range}}
  sdma.copy %b[-9223372036854775808, 1] on 0 -> %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{expects 6 fields, got 2}}
  "sdma.copy"(%b, %b) <{static_fields = array<i64: 0, 1>}> : (!sdma.buffer, !sdma.buffer) -> ()
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{has 1 dynamic fields but 0 field operands}}
  "sdma.copy"(%b, %b) <{static_fields = array<i64: 0, 0, 1, -9223372036854775808, 0, 1>}> : (!sdma.buffer, !sdma.buffer) -> ()
}

// -----

// static_fields is a property: the generic form without it has no fields,
// and one of another type is refused while parsing.
sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{expects 6 fields, got 0}}
  "sdma.copy"(%b, %b) : (!sdma.buffer, !sdma.buffer) -> ()
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{invalid properties {static_fields = [0, 1, 2]} for op sdma.copy: expected DenseI64ArrayAttr}}
  "sdma.copy"(%b, %b) <{static_fields = [0, 1, 2]}> : (!sdma.buffer, !sdma.buffer) -> ()
}

// -----

// expected-error @+1 {{must be nested in an 'sdma.schedule'}}
%0 = sdma.rank_add 0, 1

// -----

// expected-error @+1 {{must be nested in an 'sdma.schedule'}}
sdma.barrier

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{source rank 4 is out of range [0, 4)}}
  sdma.copy %b[0, 1] on 4 -> %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{destination rank -1 is out of range [0, 4)}}
  sdma.copy %b[0, 1] on 0 -> %b[0, 1] on -1
}

// -----

sdma.schedule @s ranks(%R) buffers(%b : ranks) {
  // expected-error @+1 {{source rank 70000 is out of range [0, 65536)}}
  sdma.copy %b[0, 1] on 70000 -> %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{source offset -2 in buffer 'b' is negative}}
  sdma.copy %b[-2, 1] on 0 -> %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{destination slice of buffer 'b' is empty (count 0)}}
  sdma.copy %b[0, 1] on 0 -> %b[0, 0] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%in : 2, %out : ranks) {
  // expected-error @+1 {{destination slice [3, 3 + 2) is out of bounds of buffer 'out', which has 4 chunks}}
  sdma.copy %in[0, 2] on 0 -> %out[3, 2] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : ranks) {
  // expected-error @+1 {{source slice [9223372036854775807, 9223372036854775807 + 1) is out of bounds of buffer 'in', which has 1 chunks}}
  sdma.copy %in[9223372036854775807, 1] on 0 -> %out[3, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%in : 2, %out : ranks) {
  // expected-error @+1 {{source has 2 chunks but destination has 1}}
  sdma.copy %in[0, 2] on 0 -> %out[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{source and destination overlap}}
  sdma.copy %b[0, 2] on 1 -> %b[1, 2] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : ranks) {
  // expected-error @+1 {{source has 1 chunks but destination 1 has 2}}
  sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[0, 2] on 2
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%in : 1, %out : ranks) {
  // expected-error @+1 {{destinations overlap}}
  sdma.bcast %in[0, 1] on 0 -> %out[0, 1] on 1, %out[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{destination 0 overlaps the source}}
  sdma.bcast %b[0, 1] on 0 -> %b[0, 1] on 0, %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{destination 1 overlaps the source}}
  sdma.bcast %b[0, 2] on 0 -> %b[0, 2] on 1, %b[1, 2] on 0
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{first slice has 2 chunks but second slice has 1}}
  sdma.swap %b[0, 2] on 0 <-> %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{swap slices overlap}}
  sdma.swap %b[0, 2] on 0 <-> %b[1, 2] on 0
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{rank 4 is out of range [0, 4)}}
  sdma.fence on 4
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{expects 1 fields, got 2}}
  "sdma.fence"() <{static_fields = array<i64: 0, 1>}> : () -> ()
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{signalled rank 9 is out of range [0, 4)}}
  sdma.signal 0 -> 9
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{signalling rank -1 is out of range [0, 4)}}
  sdma.signal -1 -> 0
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{tag -1 is negative}}
  sdma.signal 0 -> 1 tag -1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{waiting rank 4 is out of range [0, 4)}}
  sdma.wait 4 <- 0
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{awaited rank 5 is out of range [0, 4)}}
  sdma.wait 0 <- 5
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{rank 4 is out of range [0, 4)}}
  %0 = sdma.rank_add 4, 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{expected 'on'}}
  sdma.copy %b[0, 1] at 0 -> %b[0, 1] on 1
}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{expected '->'}}
  sdma.copy %b[0, 1] on 0 <-> %b[1, 1] on 1
}

// -----

// expected-error @+1 {{expected 'ranks'}}
sdma.schedule @s ranks(%R = 4) buffers(%b : 2 x rank) {}

// -----

sdma.schedule @s ranks(%R = 4) buffers(%b : ranks) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  sdma.copy %nope[0, 1] on 0 -> %b[1, 1] on 1
}

// -----

// expected-error @+1 {{implements unknown collective 'allreduce' (expected all_gather, all_to_all, all_to_allv, all_to_allv_packed, all_to_allv_2d, all_to_allv_2d_offset, broadcast, scatter, gather, all_reduce, reduce_scatter or reduce)}}
sdma.schedule @s ranks(%R = 2) buffers(%a : 1, %b : 2) implements allreduce(%a -> %b) {}

// -----

// expected-error @+1 {{'implements' names a buffer that the schedule does not declare}}
sdma.schedule @s ranks(%R = 2) buffers(%a : 1, %b : 2) implements all_gather(%a -> %c) {}

// -----

// expected-error @+1 {{'all_gather' cannot be in place}}
sdma.schedule @s ranks(%R = 2) buffers(%a : 1, %b : 2) implements all_gather(%b -> %b) {}

// -----

// expected-error @+1 {{'scatter' needs a root}}
sdma.schedule @s ranks(%R = 2) buffers(%a : ranks, %b : 1) implements scatter(%a -> %b) {}

// -----

// expected-error @+1 {{'all_to_all' takes no root}}
sdma.schedule @s ranks(%R = 2) buffers(%a : ranks, %b : ranks) implements all_to_all(%a -> %b) root 0 {}

// -----

// expected-error @+1 {{root 2 is out of range [0, 2)}}
sdma.schedule @s ranks(%R = 2) buffers(%a : 1, %b : 1) implements broadcast(%a -> %b) root 2 {}

// -----

// expected-error @+1 {{expects 'collective_buffers' to name an input and an output buffer}}
"sdma.schedule"() <{buffer_names = ["b"], buffer_sizes = array<i64: 0, 1>, sym_name = "s", collective = "broadcast", collective_buffers = array<i64: 0, 5>, root = 0}> ({
^bb0(%R: index, %b: !sdma.buffer):
}) : () -> ()

// -----

// expected-error @+1 {{has collective buffers or a root but no collective}}
"sdma.schedule"() <{buffer_names = ["b"], buffer_sizes = array<i64: 0, 1>, sym_name = "s", root = 0}> ({
^bb0(%R: index, %b: !sdma.buffer):
}) : () -> ()

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{rank 2 is out of range [0, 2)}}
  sdma.notify 2 : 0 -> 1 [2]
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{target rank 5 is out of range [0, 2)}}
  sdma.notify 0 : 0 -> 5 [2]
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{engine -1 is negative}}
  sdma.notify 0 : -1 -> 1 [2]
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{flag -2 is negative}}
  sdma.poll 0 : 0 until [-2] at_least 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{value 0 is not positive}}
  sdma.poll 0 : 0 until [2] at_least 0
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{notifies flag 0, the launch flag, which only the host raises (flags from 1 up)}}
  sdma.notify 0 : 0 -> 1 [0]
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 1) {
  // expected-error @+1 {{polls the launch flag 0 for 2, but the host raises it to 1 (once per launch)}}
  sdma.poll 0 : 0 until [0] at_least 2
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%b : 2) {
  // expected-error @+1 {{engine -1 is negative}}
  sdma.copy %b[0, 1] on 0 -> %b[1, 1] on 1 {engine = -1 : i64}
}

// -----

// expected-error @+1 {{must be nested in an 'sdma.schedule'}}
sdma.poll 0 : 0 until [2] at_least 1

// -----

// Count tables and sdma.copyv (run-time counts).

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{count table 'in' is not a count table (declare it counts[SIZE])}}
  sdma.copyv %in[0] on 0 -> %out[0] on 1, count %in[0] on 0 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{source buffer 'n' is a count table, not data}}
  sdma.copyv %n[0] on 0 -> %out[0] on 1, count %n[0] on 0 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{count index 2 is out of range of count table 'n', which has 2 entries}}
  sdma.copyv %in[0] on 0 -> %out[0] on 1, count %n[2] on 0 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{destination slot [1, 1 + max 2) is out of bounds of buffer 'out', which has 2 chunks}}
  sdma.copyv %in[0] on 0 -> %out[1] on 1, count %n[0] on 0 max 2
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{max 0 must be positive}}
  sdma.copyv %in[0] on 0 -> %out[0] on 1, count %n[0] on 0 max 0
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{count rank 2 is out of range [0, 2)}}
  sdma.copyv %in[0] on 0 -> %out[0] on 1, count %n[0] on 2 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) {
  // expected-error @+1 {{destination prefix table 'out' is not a count table (declare it counts[SIZE])}}
  sdma.copyv %in[0] on 0 -> %out[packed %out[0] on 1] on 1, count %n[0] on 0 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 4, %n : counts[2]) {
  // expected-error @+1 {{source and destination slots overlap}}
  sdma.copyv %in[0] on 0 -> %in[1] on 0, count %n[0] on 0 max 2
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 4, %n : counts[2]) {
  // expected-error @+1 {{source and destination are one buffer; a packed side could overlap the other}}
  sdma.copyv %in[packed %n[1] on 0] on 0 -> %in[2] on 0, count %n[1] on 0 max 1
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %n : counts[2]) {
  // expected-error @+1 {{moves between count table 'n' and data buffer 'in'}}
  sdma.copy %n[0, 1] on 0 -> %in[0, 1] on 1
}

// -----

// expected-error @+1 {{'all_to_allv' needs its count tables: counts(%send) or counts(%send -> %recv)}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2) implements all_to_allv(%in -> %out) {
}

// -----

// expected-error @+1 {{buffer 'n' holds counts but is not declared counts[...]}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : 2) implements all_to_allv(%in -> %out) counts(%n) {
}

// -----

// expected-error @+1 {{'all_to_all' takes no count tables}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_all(%in -> %out) counts(%n) {
}

// -----

// expected-error @+1 {{'all_to_allv' needs distinct send and receive count tables}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%n -> %n) {
}

// -----

// expected-error @+1 {{'counts' names a buffer that the schedule does not declare}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv(%in -> %out) counts(%m) {
}

// -----

// expected-error @+1 {{'all_to_allv' cannot be in place}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %n : counts[2]) implements all_to_allv(%in -> %in) counts(%n) {
}

// -----

// expected-error @+1 {{'all_to_allv_packed' needs a receive-count table: counts(%send -> %recv)}}
sdma.schedule @s ranks(%R = 2) buffers(%in : 2, %out : 2, %n : counts[2]) implements all_to_allv_packed(%in -> %out) counts(%n) {
}

// -----

sdma.schedule @s ranks(%R = 2) buffers(%in : 1, %out : ranks) implements all_gather(%in -> %out) {
  // expected-error @+1 {{needs a schedule that declares a root (`implements KIND(...) root N`), but '@s' declares none}}
  %root = sdma.root
}

// -----

// expected-error @+1 {{expects to be inside an 'sdma.schedule'}}
%root = sdma.root
