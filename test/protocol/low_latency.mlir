// The communicator's low-latency call (lib/Target/HIP/LdstLowLatency.hip)
// as a schedule sdma-verify proves: no job barrier; each rank's packets
// for another rank go into that rank's inbox, in the slot of the call's
// number (k mod 2), and the receiver moves them into its own output. A
// packet's flag travels in the same words as its data, so "the data
// arrived" is modelled as the copy into the inbox followed by a signal the
// receiver waits for. Every rank sends every other rank a header (its call
// tag) whatever data it has for it, and polls every peer's before it
// writes its own memory. Three consecutive broadcasts from rank 0: the
// root's region of an inbox is written again two calls later (slot 0), and
// the pairs that carry no data (a non-root to anyone) carry only headers,
// the case where that reuse rests on the header alone.
// The kernel boundary (the stream runs a rank's next call after its
// current one ends) is a fence on the rank; the caller writes its input
// before a call and reads its output after it, as in call_protocol.mlir.
//
//   rank r, call k (slot s = k mod 2, root t = 0):
//     caller: input <- fresh[k]
//     header to every q != r                        (signal, tag 0)
//     r == t: input -> inbox[s * R + t] on every q != t, then its flag
//     wait for every peer's header                  (wait, tag 0)
//     r == t: input -> output; else wait for t's data (tag 1) and
//       inbox[s * R + t] -> output
//     the kernel ends (fence); caller: output -> seen[k]
//
// Proved race- and deadlock-free at 2-9 ranks; the mutants are refused with
// the race each opens: without headers, the root's write into a slot two
// calls later races a receiver still reading it; with one slot instead of
// two, the next call's write races the previous call's read.
//
// RUN: for r in 2 3 4 5 6 7 8 9; do sdma-opt %s --sdma-unroll=ranks=$r --sdma-verify=report=0 > /dev/null || exit 1; done
// RUN: sed -e '/^ *.. HEADER:/,/^ *.. END HEADER/d' %s > %t.noheader.mlir
// RUN: not sdma-opt %t.noheader.mlir --sdma-unroll=ranks=3 --sdma-verify=report=0 2>&1 | FileCheck %s --check-prefix=NOHEADER
// NOHEADER: races with another op: it {{reads|writes}} inbox[{{[0-9]+}}, {{[0-9]+}}) on rank {{[0-9]}}
// RUN: sed -e 's/(d0 mod 2) \* s0/0 * s0/' %s > %t.oneslot.mlir
// RUN: not sdma-opt %t.oneslot.mlir --sdma-unroll=ranks=3 --sdma-verify=report=0 2>&1 | FileCheck %s --check-prefix=ONESLOT
// ONESLOT: races with another op: it {{reads|writes}} inbox[{{[0-9]+}}, {{[0-9]+}}) on rank {{[0-9]}}
sdma.schedule @low_latency ranks(%R)
    buffers(%fresh : 3, %input : 1, %output : 1, %inbox : 2 x ranks,
            %seen : 3) {
  affine.for %k = 0 to 3 {
    %t = arith.constant 0 : index
    // The root's region of an inbox in this call's slot.
    %at = affine.apply affine_map<(d0)[s0] -> ((d0 mod 2) * s0)>(%k)[%R]
    affine.for %r = 0 to %R {
      sdma.copy %fresh[%k, 1] on %r -> %input[0, 1] on %r
      sdma.fence on %r
    }
    // HEADER: every rank tells every other rank (r + d) it started call k.
    affine.for %r = 0 to %R {
      affine.for %d = 1 to %R {
        %q = affine.apply affine_map<(d0, d1)[s0] -> ((d0 + d1) mod s0)>(%r, %d)[%R]
        sdma.signal %r -> %q tag 0
      }
    }
    // END HEADER
    // The root's packets for every other rank, each with its flag.
    affine.for %d = 1 to %R {
      %q = affine.apply affine_map<(d0, d1)[s0] -> ((d0 + d1) mod s0)>(%t, %d)[%R]
      sdma.copy %input[0, 1] on %t -> %inbox[%at, 1] on %q
      sdma.signal %t -> %q tag 1
    }
    // HEADER: every rank polls every peer's header.
    affine.for %r = 0 to %R {
      affine.for %d = 1 to %R {
        %q = affine.apply affine_map<(d0, d1)[s0] -> ((d0 + d1) mod s0)>(%r, %d)[%R]
        sdma.wait %r <- %q tag 0
      }
    }
    // END HEADER
    // Each rank writes its own output: the root from its input, the others
    // from the root's packets once they arrived.
    sdma.copy %input[0, 1] on %t -> %output[0, 1] on %t
    affine.for %d = 1 to %R {
      %q = affine.apply affine_map<(d0, d1)[s0] -> ((d0 + d1) mod s0)>(%t, %d)[%R]
      sdma.wait %q <- %t tag 1
      sdma.copy %inbox[%at, 1] on %q -> %output[0, 1] on %q
    }
    // The kernel ends; the caller reads the output.
    affine.for %r = 0 to %R {
      sdma.fence on %r
      sdma.copy %output[0, 1] on %r -> %seen[%k, 1] on %r
      sdma.fence on %r
    }
  }
}
