// All-to-allv, capacity slots (MoE dispatch/combine with GPU-resident
// counts): every receiver keeps one slot per sender, a chunk of C rows;
// rank r sends send_counts[p] rows of its slot p to slot r of rank p, and
// puts that count into recv_counts[r] of rank p. The counts are read on
// the GPU when the kernel runs: no host sync, and one compiled schedule
// serves every count and every capacity (a count above C is a reported
// error, never an overwrite). Rows are the run-time unit of counts; a chunk
// holds C of them.
//
//               rank 0                  rank 1
//   send_counts [1][2]                  [0][3]
//   before in:  [a . .][b c .]          [. . .][d e f]
//   after  out: [a . .][. . .]          [b c .][d e f]
//   recv_counts [1][0]                  [2][3]
//
//   rank r:  copy send_counts[p] -> recv_counts[r] on p;
//            copyv in[slot p] -> out[slot r] on p, count send_counts[p]
sdma.schedule @all_to_allv_slots ranks(%R)
    buffers(%input : ranks, %output : ranks, %send_counts : counts[ranks],
            %recv_counts : counts[ranks])
    implements all_to_allv(%input -> %output)
        counts(%send_counts -> %recv_counts) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %send_counts[%p, 1] on %r -> %recv_counts[%r, 1] on %p
      sdma.copyv %input[%p] on %r -> %output[%r] on %p,
          count %send_counts[%p] on %r max 1
    }
  }
}
