// All-to-allv, packed (torch's all_to_all_single with GPU-resident split
// sizes): rank r's input holds the rows for rank 0, then for rank 1, ...;
// each output holds the rows from rank 0, then from rank 1, ... Offsets are
// exclusive prefix sums of the counts a receiver gets. One phase: each
// rank puts each run of rows where the receiver's prefix sum says, reading
// that sum `forwarded` (from the senders' send_counts, where the count puts
// read it, so no barrier waits for the puts), then its counts into the
// receivers' recv_counts (one 8-byte put per pair, for the caller; after
// the rows in the phase, which measured faster on an H100 than before
// them). Nothing goes through the host.
//
//               rank 0                  rank 1
//   send_counts [1][2]                  [3][1]
//   before in:  [a][b c]                [d e f][g]
//   after       recv_counts [1][3]      recv_counts [2][1]
//               out [a][d e f]          out [b c][g]
//
//   rank r:  copyv in[packed send_counts, p] -> out[packed forwarded
//            recv_counts, r] on p, count send_counts[p];
//            copy send_counts[p] -> recv_counts[r] on p
sdma.schedule @all_to_allv_packed ranks(%R)
    buffers(%input : ranks, %output : ranks, %send_counts : counts[ranks],
            %recv_counts : counts[ranks])
    implements all_to_allv_packed(%input -> %output)
        counts(%send_counts -> %recv_counts) {
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copyv %input[packed %send_counts[%p] on %r] on %r
          -> %output[packed forwarded %recv_counts[%r] on %p] on %p,
          count %send_counts[%p] on %r max 1
    }
  }
  affine.for %r = 0 to %R {
    affine.for %p = 0 to %R {
      sdma.copy %send_counts[%p, 1] on %r -> %recv_counts[%r, 1] on %p
    }
  }
}
