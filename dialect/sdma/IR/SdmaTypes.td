//===- SdmaTypes.td - sdma types ---------------------------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMATYPES_TD
#define SDMA_IR_SDMATYPES_TD

include "sdma/IR/SdmaDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Sdma_BufferType : TypeDef<Sdma_Dialect, "Buffer"> {
  let mnemonic = "buffer";
  let summary = "a symmetric buffer: one allocation on every rank";
  let description = [{
    The type of a schedule's buffer arguments. Every rank has its own copy of
    each buffer. The size (`perRank * R + fixed` chunks) is declared with the
    buffer in `sdma.schedule`'s header, e.g. `buffers(%in : 1, %out : ranks)`,
    so every buffer has the same type and slices can name buffers without
    repeating their types.
  }];
}

#endif // SDMA_IR_SDMATYPES_TD
