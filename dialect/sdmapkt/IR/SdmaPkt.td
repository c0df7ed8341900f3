//===- SdmaPkt.td - AMD SDMA packet dialect ----------------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// One op per SDMA packet (../shared/SDMA-PACKETS.md), one region per engine
// queue. Addresses and byte counts are either raw numbers or relocations
// (a buffer chunk, a flag slot, a timestamp slot; a count of chunks) that the
// runtime patches once buffers are placed and the chunk size is known.
//
//===----------------------------------------------------------------------===//

#ifndef SDMAPKT_TD
#define SDMAPKT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"

def SdmaPkt_Dialect : Dialect {
  let name = "sdmapkt";
  let cppNamespace = "::sdma::pkt";
  let summary = "AMD SDMA packets, one op per packet";
  let description = [{
    The packet-level IR of the AMD target: an `sdmapkt.program` holds one
    `sdmapkt.queue` per (rank, engine), and a queue holds the packets that
    engine runs, in order, exactly as the hardware sees them. Addresses are
    relocations (`#sdmapkt.chunk`, `#sdmapkt.flag`, `#sdmapkt.timestamp`) or
    raw 64-bit numbers; byte counts are `#sdmapkt.chunks<N>` (N chunks,
    patched at launch) or raw byte counts. A program names the target
    profile it is built for (`target`, sdmapkt/IR/Targets.h: gfx9, gfx942,
    gfx950), and the verifiers enforce what that engine needs: counts within
    its copy and swap limits, swaps and NOP counts only where it has them,
    broadcast destinations at the same offset within 32 bytes, swap operands
    64-byte aligned, two-destination broadcasts.
    `sdma-translate --sdma-to-packets` encodes it; `--sdma-to-packet-listing`
    prints one packet per line.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class SdmaPkt_Attr<string name, string attrMnemonic>
    : AttrDef<SdmaPkt_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def SdmaPkt_ChunkAttr : SdmaPkt_Attr<"Chunk", "chunk"> {
  let summary = "the address of a chunk of a symmetric buffer on a rank";
  let description = [{
    `#sdmapkt.chunk<"output", 3, 5>`: buffer `output` of rank 3, chunk 5 —
    patched to base(output, rank 3) + 5 x chunk bytes.
  }];
  let parameters = (ins StringRefParameter<>:$buffer, "int64_t":$rank,
                        "int64_t":$chunk);
  let assemblyFormat = "`<` $buffer `,` $rank `,` $chunk `>`";
}

def SdmaPkt_FlagAttr : SdmaPkt_Attr<"Flag", "flag"> {
  let summary = "the address of a 64-bit flag slot of a rank";
  let description = [{
    `#sdmapkt.flag<1, 2>`: flag slot 2 of rank 1 (slot 0: launch, slot 1:
    completions the host waits for, slots 2 and up: engine-to-engine).
  }];
  let parameters = (ins "int64_t":$rank, "int64_t":$slot);
  let assemblyFormat = "`<` $rank `,` $slot `>`";
}

def SdmaPkt_TimestampAttr : SdmaPkt_Attr<"Timestamp", "timestamp"> {
  let summary = "the address of a 32-byte timestamp slot of a rank";
  let parameters = (ins "int64_t":$rank, "int64_t":$index);
  let assemblyFormat = "`<` $rank `,` $index `>`";
}

def SdmaPkt_ChunksAttr : SdmaPkt_Attr<"Chunks", "chunks"> {
  let summary = "a byte count of N chunks, patched at launch";
  let parameters = (ins "int64_t":$count);
  let assemblyFormat = "`<` $count `>`";
}

class SdmaPkt_Op<string mnemonic, list<Trait> traits = []>
    : Op<SdmaPkt_Dialect, mnemonic, traits>;

def SdmaPkt_ProgramOp : SdmaPkt_Op<"program", [
    Symbol, SingleBlock, NoTerminator, IsolatedFromAbove]> {
  let summary = "the packet queues of one schedule";
  let description = [{
    Declares what relocations may name — the ranks, the symmetric buffers
    with their sizes in chunks, the flag slots and timestamp slots per rank —
    and the launch-time contract: every chunk size used must be a multiple
    of `chunk_align` (so aligned packets stay aligned) and at most
    `max_chunk_bytes` (so split transfers stay within the count field).
    `done` is, per rank, the value flag 1 reaches when the rank's queues
    are finished. `target` names the SDMA target profile (gfx9, gfx942,
    gfx950) whose limits the packets respect. Buffer bases are assumed at
    least 256-byte aligned, so a chunk's alignment is its offset's.

    ```mlir
    sdmapkt.program @ag attributes {ranks = 2 : i64, buffers = ["in", "out"],
        buffer_chunks = [1, 2], flags = 3 : i64, timestamps = 0 : i64,
        chunk_align = 64 : i64, max_chunk_bytes = 67108864 : i64,
        done = [1, 1], target = "gfx9"} {
      sdmapkt.queue 0 : 0 {
        sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<1>
        sdmapkt.atomic_add64 #sdmapkt.flag<0, 1> value 1
      }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$ranks,
                       StrArrayAttr:$buffers, I64ArrayAttr:$buffer_chunks,
                       I64Attr:$flags, I64Attr:$timestamps,
                       I64Attr:$chunk_align, I64Attr:$max_chunk_bytes,
                       I64ArrayAttr:$done, StrAttr:$target);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Index of buffer `name`, or -1.
    int64_t findBuffer(llvm::StringRef name);
    /// The profile `target` names, or null (which the verifier reports).
    const ::sdma::pkt::TargetProfile *getProfile();
  }];
}

def SdmaPkt_QueueOp : SdmaPkt_Op<"queue", [
    SingleBlock, NoTerminator, HasParent<"ProgramOp">]> {
  let summary = "the packets of one engine of one rank, in order";
  let description = [{
    `sdmapkt.queue 1 : 0 { ... }` is engine 0 of rank 1. The engine runs its
    packets in order; engines run concurrently.
  }];
  let arguments = (ins I64Attr:$rank, I64Attr:$engine);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$rank `:` $engine attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

class SdmaPkt_PacketOp<string mnemonic>
    : SdmaPkt_Op<mnemonic, [HasParent<"QueueOp">]> {
  let hasVerifier = 1;
}

def SdmaPkt_CopyLinearOp : SdmaPkt_PacketOp<"copy_linear"> {
  let summary = "COPY_LINEAR (op 1, sub-op 0): one contiguous copy";
  let description = [{
    7 dwords. Copies `count` bytes from `src` to `dst` (count stored as
    bytes - 1: at most 4 MiB on gfx9's 22 bits, 1 GiB on gfx942's 30 bits,
    128 MiB on gfx950).

    ```mlir
    sdmapkt.copy_linear #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0> count #sdmapkt.chunks<1>
    ```
    ```
    before: in@0 = [A]   out@1 = [_ _]     after: out@1 = [A _]
    ```
  }];
  let arguments = (ins AnyAttr:$src, AnyAttr:$dst, AnyAttr:$count);
  let assemblyFormat = "$src `->` $dst `count` $count attr-dict";
}

def SdmaPkt_CopyBroadcastOp : SdmaPkt_PacketOp<"copy_broadcast"> {
  let summary = "broadcast COPY_LINEAR: one read, two destinations";
  let description = [{
    9 dwords (broadcast bit 27 set). Both destinations at the same offset
    within 32 bytes (ROCr's rule: dst0 & 0x1F == dst1 & 0x1F); for chunk
    relocations, their chunk offsets' difference times any chunk size the
    program allows (a multiple of `chunk_align`) is a multiple of 32.

    ```mlir
    sdmapkt.copy_broadcast #sdmapkt.chunk<"in", 0, 0> -> #sdmapkt.chunk<"out", 1, 0>, #sdmapkt.chunk<"out", 2, 0> count #sdmapkt.chunks<1>
    ```
    ```
    before: in@0 = [A]  out@1 = [_ ..]  out@2 = [_ ..]
    after:              out@1 = [A ..]  out@2 = [A ..]
    ```
  }];
  let arguments = (ins AnyAttr:$src, AnyAttr:$dst0, AnyAttr:$dst1,
                       AnyAttr:$count);
  let assemblyFormat = "$src `->` $dst0 `,` $dst1 `count` $count attr-dict";
}

def SdmaPkt_CopySwapOp : SdmaPkt_PacketOp<"copy_swap"> {
  let summary = "COPY_LINEAR_SWAP (op 1, sub-op 9): exchange two ranges";
  let description = [{
    7 dwords. Exchanges `count` bytes at `a` and `b` in place; both 64-byte
    aligned, at most 0x3fffffe0 bytes (128 MiB on gfx950). Only targets with
    swap (gfx942, gfx950) accept it.

    ```mlir
    sdmapkt.copy_swap #sdmapkt.chunk<"buf", 0, 1> with #sdmapkt.chunk<"buf", 1, 0> count #sdmapkt.chunks<1>
    ```
    ```
    before: buf@0 = [a0 a1]  buf@1 = [b0 b1]
    after:  buf@0 = [a0 b0]  buf@1 = [a1 b1]
    ```
  }];
  let arguments = (ins AnyAttr:$a, AnyAttr:$b, AnyAttr:$count);
  let assemblyFormat = "$a `with` $b `count` $count attr-dict";
}

def SdmaPkt_FenceOp : SdmaPkt_PacketOp<"fence"> {
  let summary = "FENCE (op 5): write a 32-bit value once earlier packets are done";
  let description = [{
    4 dwords; address 4-byte aligned.

    ```mlir
    sdmapkt.fence #sdmapkt.flag<1, 2> value 3
    ```
    ```
    before: flag@1[2] = 2     after: flag@1[2] = 3
    ```
  }];
  let arguments = (ins AnyAttr:$addr, I64Attr:$value);
  let assemblyFormat = "$addr `value` $value attr-dict";
}

def SdmaPkt_AtomicAdd64Op : SdmaPkt_PacketOp<"atomic_add64"> {
  let summary = "ATOMIC (op 10, operation 47 = ADD64): add to a 64-bit word";
  let description = [{
    8 dwords; address 8-byte aligned.

    ```mlir
    sdmapkt.atomic_add64 #sdmapkt.flag<0, 1> value 1
    ```
    ```
    before: flag@0[1] = 4     after: flag@0[1] = 5
    ```
  }];
  let arguments = (ins AnyAttr:$addr, I64Attr:$value);
  let assemblyFormat = "$addr `value` $value attr-dict";
}

def SdmaPkt_PollRegMemOp : SdmaPkt_PacketOp<"poll_regmem"> {
  let summary = "POLL_REGMEM (op 8, memory): wait until (*addr & mask) func ref";
  let description = [{
    6 dwords; address 4-byte aligned; compares the low 32 bits. `func` is
    one of always, lt, le, eq, ne, ge, gt (hardware codes 0-6); `retry`
    0xfff polls forever, `interval` is the pause between polls.

    ```mlir
    sdmapkt.poll_regmem #sdmapkt.flag<1, 0> ge 1 mask 4294967295 interval 10 retry 4095
    ```
    ```
    engine: ...... waits while flag@1[0] < 1 ...... | runs on
    ```
  }];
  let arguments = (ins AnyAttr:$addr, StrAttr:$func, I64Attr:$reference,
                       I64Attr:$mask, I64Attr:$interval, I64Attr:$retry);
  let assemblyFormat = [{
    $addr $func $reference `mask` $mask `interval` $interval `retry` $retry
    attr-dict
  }];
}

def SdmaPkt_NopOp : SdmaPkt_PacketOp<"nop"> {
  let summary = "NOP (op 0): 1 + n dwords that do nothing (ring padding)";
  let description = [{
    A count of `n` > 0 extra dwords needs SDMA firmware feature_version >= 20
    (targets gfx942 and gfx950); gfx9 takes 1-dword NOPs only.

    ```mlir
    sdmapkt.nop 0
    ```
  }];
  let arguments = (ins I64Attr:$extra);
  let assemblyFormat = "$extra attr-dict";
}

def SdmaPkt_TimestampOp : SdmaPkt_PacketOp<"timestamp"> {
  let summary = "TIMESTAMP (op 13, sub-op 2 = global): store the engine's clock";
  let description = [{
    3 dwords; address 32-byte aligned.

    ```mlir
    sdmapkt.timestamp #sdmapkt.timestamp<0, 0>
    ```
  }];
  let arguments = (ins AnyAttr:$addr);
  let assemblyFormat = "$addr attr-dict";
}

def SdmaPkt_TrapOp : SdmaPkt_PacketOp<"trap"> {
  let summary = "TRAP (op 6): raise an interrupt with a 28-bit context";
  let arguments = (ins I64Attr:$context);
  let assemblyFormat = "$context attr-dict";
}

#endif // SDMAPKT_TD
