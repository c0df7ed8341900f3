//===- Passes.td - sdma conversions ------------------------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_CONVERSION_PASSES_TD
#define SDMA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSdmaToSdmaPkt : Pass<"convert-sdma-to-sdmapkt", "mlir::ModuleOp"> {
  let summary = "lower an engine-level schedule to AMD SDMA packet queues";
  let description = [{
    Takes the one `sdma.schedule` of the module after `sdma-lower-dma` (or
    `sdma-assign-engines` + `sdma-insert-sync`: every transfer carries an
    engine, every ordering is a notify or a poll) and replaces it with an
    `sdmapkt.program` holding one `sdmapkt.queue` per (rank, engine):

    - copy -> COPY_LINEAR, bcast -> broadcast COPY_LINEAR, swap ->
      COPY_LINEAR_SWAP; a transfer longer than one packet moves at the
      largest chunk size (`max-chunk-bytes`) is split into several packets;
    - notify -> ATOMIC ADD64 of 1 (`completion=atomic`, DMA-Latte's atomic
      signal) or, with `completion=fence`, a FENCE writing the count the flag
      reaches where this queue is the flag's only writer (ATOMIC otherwise);
    - poll -> POLL_REGMEM (>=, retry forever) on the rank's flag; a
      prelaunched schedule's launch poll becomes the trigger at the head of
      each queue, and cross-rank waits poll the flag the peer writes;
    - `timestamps`: a TIMESTAMP at the start and at the end of each queue;
      `trap`: a TRAP at the end of each queue.

    `target` picks the SDMA target profile (sdmapkt/IR/Targets.h): gfx9,
    the conservative default (22-bit count: 4 MiB per packet, no swap),
    gfx942 (MI300X, recent firmware: 1 GiB per packet, swap) or gfx950
    (MI355X: 128 MiB per copy, swap). One packet moves at most the target's
    limit (or `max-packet-bytes`, if smaller); `max-chunk-bytes` defaults to
    64 MiB or that limit, whichever is less, and a larger one is an error
    naming the target. A swap on a target without COPY_LINEAR_SWAP is an
    error naming the op and the targets that have it.

    Relocations (`#sdmapkt.chunk`, `#sdmapkt.flag`, `#sdmapkt.chunks`) keep
    addresses and byte counts symbolic until launch; the program records its
    target and the chunk alignment its packets need: 64 with swaps; for a
    broadcast whose destinations are d chunks apart, 32 / gcd(32, d) (ROCr:
    both destinations at the same offset within 32 bytes; buffer bases are
    assumed at least 256-byte aligned); 1 otherwise.

    Before:
    ```mlir
    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
    sdma.notify 0 : 0 -> 1 [1]
    ```
    After:
    ```mlir
    sdmapkt.queue 0 : 0 {
      sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<1>
      sdmapkt.atomic_add64 #sdmapkt.flag<1, 1> value 1
    }
    ```
  }];
  let dependentDialects = ["::sdma::pkt::SdmaPktDialect"];
  let options = [
    Option<"completion", "completion", "std::string", "\"atomic\"",
           "how a notify completes: atomic (ATOMIC ADD64) or fence (FENCE "
           "value where the queue is the flag's only writer)">,
    Option<"target", "target", "std::string", "\"gfx9\"",
           "the SDMA target profile: gfx9 (conservative), gfx942 or gfx950">,
    Option<"maxPacketBytes", "max-packet-bytes", "int64_t", "0",
           "the most bytes one copy or swap packet moves (0: the target's "
           "limit; a larger value is lowered to it)">,
    Option<"maxChunkBytes", "max-chunk-bytes", "int64_t", "0",
           "the largest chunk size the program must support (0: 64 MiB or "
           "the target's packet limit, whichever is less)">,
    Option<"timestamps", "timestamps", "bool", "false",
           "a TIMESTAMP at the start and end of each queue">,
    Option<"trap", "trap", "bool", "false", "a TRAP at the end of each queue">,
  ];
}

#endif // SDMA_CONVERSION_PASSES_TD
