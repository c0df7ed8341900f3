//===- SdmaDialect.td - sdma dialect definition -----------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMADIALECT_TD
#define SDMA_IR_SDMADIALECT_TD

include "mlir/IR/OpBase.td"

def Sdma_Dialect : Dialect {
  let name = "sdma";
  let cppNamespace = "::sdma";
  let summary = "Collective-communication schedules over symmetric buffers";
  let description = [{
    A schedule moves chunks between the symmetric buffers of R ranks. Every
    rank has every buffer; buffer sizes are counted in chunks and the byte
    size of a chunk is bound only at run time, so one schedule serves every
    message size.

    A *slice* names a contiguous run of chunks on one rank:
    `%buffer[offset, count] on rank`. Data movement ops (`sdma.copy`,
    `sdma.bcast`, `sdma.swap`) read and write slices; ordering ops
    (`sdma.fence`, `sdma.signal`, `sdma.wait`, `sdma.barrier`) order them.

    Ordering model. Every data-movement op is *issued* by one rank (the rank
    of its first slice: the source of a copy or bcast, the first side of a
    swap). The ops a rank issues between two ordering points may run
    concurrently, in any order (on different DMA engines, say). A fence on a
    rank orders everything that rank issued before it before everything it
    issues after it. A signal from rank a to rank b is raised once every op
    that a issued before it has completed; a wait on rank b for rank a holds
    back every op b issues after it until the matching signal (the k-th wait
    on b for a, with the same tag, matches the k-th signal from a to b). A
    barrier orders every op of every rank before it before every op after it.

    Loops over ranks and steps use `affine.for` (or `scf.for`), general index
    arithmetic uses `arith`, and `sdma.rank_add` computes a rank modulo the
    rank count. `sdma-unroll` evaluates all of it for a concrete rank count
    and leaves a flat list of ops whose fields are all constants.
  }];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasCanonicalizer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // SDMA_IR_SDMADIALECT_TD
