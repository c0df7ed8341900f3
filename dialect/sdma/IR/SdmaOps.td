//===- SdmaOps.td - sdma operations ------------------------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMAOPS_TD
#define SDMA_IR_SDMAOPS_TD

include "sdma/IR/SdmaDialect.td"
include "sdma/IR/SdmaTypes.td"
include "sdma/IR/SdmaInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Sdma_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sdma_Dialect, mnemonic, traits>;

// An op's static field list (FieldsOpInterface), kDynamic where the field is
// an operand. A property, not an attribute: a schedule unrolled to a million
// ops would otherwise unique a DenseI64ArrayAttr per op in the context (the
// largest cost of the passes that create ops, and memory never freed). The
// generic form still reads and writes `static_fields = array<i64: ...>`.
def Sdma_FieldsProp : IntArrayProp<I64Prop, "static field list">;

// Ops that live somewhere inside a schedule body (possibly under loops).
class Sdma_ScheduleLevelOp<string mnemonic, list<Trait> traits = []>
    : Sdma_Op<mnemonic, !listconcat(traits, [
        Sdma_FieldsOpInterface])> {
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

def Sdma_ScheduleOp : Sdma_Op<"schedule", [
    Symbol, SingleBlock, NoTerminator, IsolatedFromAbove, AffineScope,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "a collective-communication schedule over R ranks";
  let description = [{
    A named schedule. It may declare the collective it implements, which
    `sdma-verify` proves: `implements KIND(%in -> %out)` with KIND one of
    `all_gather`, `all_to_all`, `broadcast`, `scatter`, `gather`, plus
    `root N` for the last three. The chunk layout each kind requires (c is
    the size of the input buffer for all_gather, gather and broadcast, and of
    the output buffer for all_to_all and scatter; `in == out` means in place):

    | kind       | in / out sizes | afterwards, on rank r                     |
    |------------|----------------|-------------------------------------------|
    | all_gather | c / R*c        | out[p*c + i] = in[i] of rank p, every p   |
    | all_to_all | R*c / R*c      | out[p*c + i] = in[r*c + i] of rank p      |
    | broadcast  | c / c          | out[i] = in[i] of the root                |
    | scatter    | R*c / c        | out[i] = in[r*c + i] of the root          |
    | gather     | c / R*c        | on the root: out[p*c + i] = in[i] of p    |

    | all_to_allv | R*C / R*C (capacity slots) | out[p*C + i] = in[r*C + i] of p, i < send[r] of p |
    | all_to_allv_packed | any / any | segment p of out = segment r of in of p |
    | all_to_allv_2d | any / any | expert-major: segment (e, r) of out = segment (p, e) of in of r |
    | all_to_allv_2d_offset | any / any | rank-major: segment (p, e) of out = in[offsets[e*R + r] of p] |

    The MoE pair (E local experts per rank, `sdma-unroll experts=E
    major-align=A`): `all_to_allv_2d` (dispatch, torch's
    `all_to_all_vdev_2d`) takes send counts `counts[experts x ranks]`
    rank-major (send[p*E + e]: rows for expert e of rank p, packed in that
    order) and a receive table `counts[experts x ranks]` expert-major
    (recv[e*R + r] must end holding send[p*E + e] of r); out is expert-major,
    each expert's segment padded to a multiple of A rows, at least A.
    `all_to_allv_2d_offset` (combine, torch's `all_to_all_vdev_2d_offset`)
    takes `counts[2 x experts x ranks]` on the expert side (splits[e*R + r],
    then at E*R + e*R + r the offset of that segment in `in`) and a receive
    table `counts[experts x ranks]` rank-major; out is packed rank-major.

    | reduce_scatter | R*c / c    | out[i] = op over every p of in[r*c + i] of p |
    | all_reduce | c / c          | out[i] = op over every p of in[i] of p    |
    | reduce     | c / c          | on the root: out[i] = op over p of in[i] of p |

    The reductions need typed buffers and `sdma.reduce` (one operator
    throughout); "op over every p" means each rank's chunk counted exactly
    once, in any order (the operators are commutative and associative).

    A buffer's size may carry an element type, `f32[ranks]` (NCCL's: f16,
    bf16, f32, f64, i8, ui8, i32, ui32, i64, ui64): its chunks then hold whole elements of that type
    (the runtime refuses a chunk size that is not a multiple of the
    element size), which `sdma.reduce` computes on. Copies move bytes and
    do not look at types.

    Both name their count tables, `counts(%send)` or `counts(%send ->
    %recv)` (packed needs `%recv`); where `%recv` is named, recv[p] of r
    must end up holding send[r] of p. Capacity slots: C = out / R chunks
    per source rank. Packed: segments follow each other in rank order;
    their offsets are the exclusive prefix sums of the counts.

    A buffer declared `counts[SIZE]` is a count table: SIZE 64-bit
    integers (not chunks) that `sdma.copyv` reads its run-time counts and
    packed offsets from, and that `sdma.copy` may move between count
    tables (the exchange phase of a packed all-to-allv).

    Its body block takes the rank count `%R : index`
    followed by the symmetric buffers it uses (type `!sdma.buffer`). Each
    buffer is declared with its size in chunks, `N`, `ranks`, `K x ranks` or
    `K x ranks + N` (R is the rank count), or `experts x ranks` /
    `K x experts x ranks` (E, the local experts per rank of an MoE
    schedule, bound by `sdma-unroll experts=E`: the count tables of
    `all_to_allv_2d`); the names written for the buffers
    are kept (`buffer_names`) and are the names a runtime binds memory to.
    The rank count is either fixed (`ranks(%R = 8)`) or left open
    (`ranks(%R)`) and given to `sdma-unroll`.

    ```mlir
    // All-gather, every rank puts its chunk straight into every output.
    sdma.schedule @all_gather_direct ranks(%R)
        buffers(%input : 1, %output : ranks) {
      affine.for %r = 0 to %R {
        affine.for %p = 0 to %R {
          sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %p
        }
      }
    }
    ```

    Buffers before and after (R = 3, chunk `x_r` is rank r's input):

    ```
                 rank 0        rank 1        rank 2
    before  in:  [x0]          [x1]          [x2]
            out: [ ][ ][ ]     [ ][ ][ ]     [ ][ ][ ]
    after   out: [x0][x1][x2]  [x0][x1][x2]  [x0][x1][x2]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<I64Attr>:$num_ranks,
                       StrArrayAttr:$buffer_names,
                       DenseI64ArrayAttr:$buffer_sizes,
                       OptionalAttr<StrAttr>:$collective,
                       OptionalAttr<DenseI64ArrayAttr>:$collective_buffers,
                       OptionalAttr<I64Attr>:$root,
                       OptionalAttr<DenseI64ArrayAttr>:$count_buffers,
                       OptionalAttr<TypeArrayAttr>:$buffer_types,
                       OptionalAttr<I64Attr>:$local_ranks,
                       OptionalAttr<I64Attr>:$experts,
                       OptionalAttr<I64Attr>:$major_align);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The rank count, if fixed.
    std::optional<int64_t> getRanks() { return getNumRanks(); }
    /// The `%R : index` block argument.
    ::mlir::BlockArgument getRankCountArg() {
      return getBody().front().getArgument(0);
    }
    /// The buffer block arguments, in declaration order.
    ::llvm::ArrayRef<::mlir::BlockArgument> getBufferArgs() {
      return getBody().front().getArguments().drop_front();
    }
    /// The declared name of `buffer` (a buffer block argument).
    ::llvm::StringRef getBufferName(::mlir::Value buffer);
    /// The size of `buffer` in chunks for a rank count; std::nullopt when
    /// the count is unknown and the size depends on it.
    std::optional<int64_t> getBufferChunks(::mlir::Value buffer,
                                           std::optional<int64_t> ranks);
    /// The declared size of `buffer`: {chunks per rank, fixed chunks}; a
    /// negative `chunks per rank` -k is `k x experts x ranks` (bound by
    /// sdma-unroll experts=E, which makes it k * E).
    std::pair<int64_t, int64_t> getBufferSize(::mlir::Value buffer);
    /// The local experts per rank (`sdma.experts`), if bound.
    std::optional<int64_t> getExpertCount() { return getExperts(); }
    /// The alignment of an expert-major segment (`major_align`, default 1).
    int64_t getMajorAlignment() { return getMajorAlign().value_or(1); }
    /// The index of the collective's input or output buffer, if declared.
    std::optional<unsigned> getCollectiveInput();
    std::optional<unsigned> getCollectiveOutput();
    /// all_to_allv: the send-count table (`counts(%send ...)`) and, for the
    /// packed layout, the receive-count table (`counts(%send -> %recv)`).
    std::optional<unsigned> getCollectiveSendCounts();
    std::optional<unsigned> getCollectiveRecvCounts();
    /// True when `buffer` is a count table (`counts[SIZE]`: 64-bit integer
    /// elements, not chunks).
    bool isCountBuffer(::mlir::Value buffer);
    bool isCountBuffer(unsigned index);
    /// The element type of a typed buffer (`f32[ranks]`); null when the
    /// buffer is untyped (bytes).
    ::mlir::Type getBufferElementType(unsigned index);
    ::mlir::Type getBufferElementType(::mlir::Value buffer);
    /// True for the element types a buffer may declare.
    static bool isElementType(::mlir::Type type);
    /// True for the collectives whose outputs are reductions.
    static bool isReduction(::llvm::StringRef kind);
    /// The collectives `implements` accepts; some need a root.
    static ::llvm::ArrayRef<::llvm::StringRef> getCollectiveKinds();
    static bool collectiveNeedsRoot(::llvm::StringRef kind);
  }];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// Data-movement ops carry an optional `engine` attribute: the DMA queue of
// the issuing rank that runs them, set by sdma-assign-engines.
class Sdma_TransferOp<string mnemonic, list<Trait> traits = []>
    : Sdma_ScheduleLevelOp<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Sdma_TransferOpInterface>])>;

def Sdma_CopyOp : Sdma_TransferOp<"copy"> {
  let summary = "copy (put) one slice to another, possibly on another rank";
  let description = [{
    Copies `count` chunks from a source slice to a destination slice of the
    same size. The source rank issues the copy (a put), or with `pull` the
    destination rank (a get: it reads the source, over the fabric when
    remote, and its fences, signals and engines order the copy); source and
    destination may be on the same rank. A slice is
    `%buffer[offset, count] on rank`, offsets and counts in chunks; each
    field is a constant or an index value. Copying a slice onto itself is a
    no-op that canonicalisation removes; source and destination may not
    otherwise overlap.

    ```mlir
    sdma.copy %input[0, 1] on %r -> %output[%r, 1] on %p
    sdma.copy %input[0, 2] on 0 -> %output[2, 2] on 1
    // the same bytes, moved by rank 1 (a get)
    sdma.copy pull %input[0, 2] on 0 -> %output[2, 2] on 1
    ```

    Buffers before and after the second (or third) example:

    ```
                  rank 0             rank 1
    before  in:   [a][b][c][d]       [e][f][g][h]
            out:  [ ][ ][ ][ ]       [ ][ ][ ][ ]
    after   out:  [ ][ ][ ][ ]       [ ][ ][a][b]
    ```
  }];
  let arguments = (ins Sdma_BufferType:$source, Sdma_BufferType:$target,
                       Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       OptionalAttr<I64Attr>:$engine,
                       UnitAttr:$pull);
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    ::sdma::Slice getSourceSlice() { return getSlice(0); }
    ::sdma::Slice getTargetSlice() { return getSlice(1); }
    /// A pull is issued by the destination's rank.
    unsigned getIssuingSlice() { return getPull() ? 1 : 0; }
  }];
}

def Sdma_BcastOp : Sdma_TransferOp<"bcast"> {
  let summary = "copy one slice to two destinations (DMA broadcast copy)";
  let description = [{
    Reads the source slice once and writes it to two destination slices of
    the same size, on any ranks: one command where two copies would be two.
    This is the broadcast COPY_LINEAR of AMD SDMA (two destinations at
    most). The destinations may not overlap each other or the source.

    ```mlir
    sdma.bcast %input[0, 1] on 0 -> %output[0, 1] on 1, %output[0, 1] on 2
    ```

    ```
                  rank 0     rank 1     rank 2
    before  in:   [a]        [ ]        [ ]
            out:  [ ]        [ ]        [ ]
    after   out:  [ ]        [a]        [a]
    ```
  }];
  let arguments = (ins Sdma_BufferType:$source, Sdma_BufferType:$target0,
                       Sdma_BufferType:$target1, Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       OptionalAttr<I64Attr>:$engine);
}

def Sdma_SwapOp : Sdma_TransferOp<"swap"> {
  let summary = "exchange two equal-sized slices in place (DMA swap)";
  let description = [{
    Exchanges the contents of two slices of the same size, typically on two
    ranks: one command moves data both ways (COPY_LINEAR_SWAP on AMD SDMA).
    The rank of the first slice issues it. The slices may not overlap.

    ```mlir
    sdma.swap %buf[1, 1] on 0 <-> %buf[0, 1] on 1
    ```

    ```
                  rank 0      rank 1
    before  buf:  [a][b]      [c][d]
    after   buf:  [a][c]      [b][d]
    ```
  }];
  let arguments = (ins Sdma_BufferType:$first, Sdma_BufferType:$second,
                       Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       OptionalAttr<I64Attr>:$engine);
}

def Sdma_ReduceOp : Sdma_TransferOp<"reduce"> {
  let summary = "combine a slice into another with sum, max, min or prod";
  let description = [{
    `sdma.reduce KIND DST <- SRC` replaces each element of the destination
    slice with `dst KIND src` (KIND: `sum`, `max`, `min` or `prod`), on
    typed buffers of one element type. The destination's rank issues it:
    it reads the source (possibly a peer's) and updates its own (or, for
    a destination on another rank, that rank's) memory. DMA engines
    cannot add: the load/store kernel does the arithmetic (fp32
    accumulation for f16 and bf16, wrapping two's complement for integers).

    Reduces into the *same* destination slice with the same KIND need no
    order between them: they accumulate, each source counted once, like
    atomic adds. The kernel combines them in one pass, in one order
    fixed by the operands alone: the destination's value and the sources
    by ascending rank, buffer and offset. Ranks that reduce the same
    values into their own slices (one-shot all-reduce) therefore get the
    same bits, as data-parallel replicas need. Any other overlap with an
    unordered op is a race. Source and destination may not overlap.

    ```mlir
    sdma.reduce sum %out[0, 1] on %r <- %in[0, 1] on %p
    ```

    Buffers before and after `sdma.reduce sum %acc[0, 2] on 0 <- %in[0, 2]
    on 1` (f32 chunks of one element):

    ```
                  rank 0          rank 1
    before  acc:  [1.0][2.0]      [   ][   ]
            in:   [   ][   ]      [0.5][4.0]
    after   acc:  [1.5][6.0]      [   ][   ]
    ```
  }];
  let arguments = (ins Sdma_BufferType:$target, Sdma_BufferType:$source,
                       Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       StrAttr:$kind,
                       OptionalAttr<I64Attr>:$engine);
  let extraClassDeclaration = [{
    ::sdma::Slice getTargetSlice() { return getSlice(0); }
    ::sdma::Slice getSourceSlice() { return getSlice(1); }
    /// The operators, in the order of their codes (the kernel's and the
    /// plan's): sum 0, max 1, min 2, prod 3.
    static ::llvm::ArrayRef<::llvm::StringRef> getKinds();
  }];
}

def Sdma_CopyvOp : Sdma_ScheduleLevelOp<"copyv"> {
  let summary = "copy a run-time number of chunks, read from a count table";
  let description = [{
    A copy whose chunk count is read when it runs, from element `i` of a
    count table (a buffer declared `counts[SIZE]`) on some rank, bounded
    by the static capacity `max`: the all-to-allv of MoE dispatch and
    combine, whose counts the router computes on the GPU. Each offset is a
    field (capacity slots: a fixed slot of `max` chunks) or read from a
    count table on rank q, in rows:
    - `packed %table[j] on q`: the sum of elements `[0, j)` (segments laid
      out back to back in table order);
    - `expert_major %table[j] on q`: the table holds E groups of R counts
      (expert e's group: one count per source rank); the offset is the sum
      of the whole groups before j's, each rounded up to a multiple of the
      schedule's `major_align` A and to at least A (an empty expert keeps A
      rows: grouped-GEMM kernels reject empty groups), plus the elements of
      j's group before j (torch's `all_to_all_vdev_2d` output);
    - `at %table[j] on q`: element j itself (offsets the caller computed).
    `packed forwarded` and `expert_major forwarded` read the entries of
    `%table` on q where the schedule's `sdma.copy`s into them read them:
    each entry the offset needs must be written by exactly one copy out of
    a count table that no op writes (the senders' own tables), and that
    source is what the copyv reads. The offset is the same as after those
    copies, but the copyv no longer waits for them: a count exchange needs
    no barrier before the data phase (after the communicator's entry
    barrier every rank's tables are there to read).
    The source rank issues
    it (a put), or with `pull` the destination rank (a get: the receiver
    reads the rows, their count and their offsets where they are; a hot
    sender's rows are then moved by every receiver, not by the sender
    alone). A count above `max`, or a packed segment that ends past
    its buffer, is a run-time error that names the ranks; nothing is
    written then.
    ```mlir
    // capacity slots: C = 4 chunks per source rank
    sdma.copyv %in[%p * 4] on %r -> %out[%r * 4] on %p,
        count %send[%p] on %r max 4
    // packed: offsets are prefix sums of the send and receive counts
    sdma.copyv %in[packed %send[%p] on %r] on %r
        -> %out[packed %recv[%r] on %p] on %p, count %send[%p] on %r max 4
    // MoE dispatch into expert-major rows (E experts per rank)
    sdma.copyv %in[packed %send[%p * %E + %e] on %r] on %r
        -> %out[expert_major %recv[%e * %R + %r] on %p] on %p,
        count %send[%p * %E + %e] on %r max 1
    // the same, in the phase of the count copies that fill recv: its
    // offsets come from every rank's send[p * E + g] (no barrier between)
    sdma.copy %send[%p * %E + %e, 1] on %r -> %recv[%e * %R + %r, 1] on %p
    sdma.copyv %in[packed %send[%p * %E + %e] on %r] on %r
        -> %out[expert_major forwarded %recv[%e * %R + %r] on %p] on %p,
        count %send[%p * %E + %e] on %r max 1
    // a combine the receivers pull: rank r reads its rows on p
    sdma.copyv pull %in[at %so[%o] on %p] on %p
        -> %out[packed forwarded %recv[%i] on %r] on %r,
        count %so[%j] on %p max 1
    ```
    Buffers before and after the packed example for r = 0, p = 1 (rank 0
    sends 2 chunks to rank 0 and 1 to rank 1; rank 1 sends 3 to rank 0):
    ```
                  rank 0               rank 1
    before  send: [2][1]               [3][0]
            recv: [2][3]               [1][0]
            in:   [a][b][c][ ]         [d][e][f][ ]
    after   out:  [ ][ ][ ][ ][ ]      [c][ ][ ][ ]
    ```
  }];
  // Fields: source rank, source offset, destination rank, destination
  // offset, count rank, count index, then (rank, index) of the source's
  // and of the destination's prefix table (0 where the side is not
  // packed). A side that is not packed repeats `counts` as its table.
  let arguments = (ins Sdma_BufferType:$source, Sdma_BufferType:$target,
                       Sdma_BufferType:$counts,
                       Sdma_BufferType:$source_prefix,
                       Sdma_BufferType:$target_prefix,
                       Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       I64Attr:$max,
                       DenseBoolArrayAttr:$packed,
                       OptionalAttr<DenseI64ArrayAttr>:$table_forms,
                       OptionalAttr<DenseBoolArrayAttr>:$forwarded,
                       UnitAttr:$pull);
  let extraClassDeclaration = [{
    /// Field indices.
    enum Field : unsigned { kSourceRank, kSourceOffset, kTargetRank,
      kTargetOffset, kCountRank, kCountIndex, kSourcePrefixRank,
      kSourcePrefixIndex, kTargetPrefixRank, kTargetPrefixIndex, kNumFields };
    /// The static capacity: the largest count it accepts.
    int64_t getMaxCount() { return static_cast<int64_t>(getMax()); }
    bool isSourcePacked() { return getPacked()[0]; }
    bool isTargetPacked() { return getPacked()[1]; }
    /// How a packed side's offset is read from its table (`table_forms`,
    /// absent: both prefix).
    enum TableForm : int64_t { kPrefix = 0, kExpertMajor = 1, kAt = 2 };
    TableForm getTableForm(unsigned side) {
      std::optional<::llvm::ArrayRef<int64_t>> forms = getTableForms();
      return forms && forms->size() == 2 ? TableForm((*forms)[side])
                                         : kPrefix;
    }
    /// Whether a packed side reads its table `forwarded` (through the
    /// schedule's count copies into it; `forwarded`, absent: neither).
    bool isForwarded(unsigned side) {
      std::optional<::llvm::ArrayRef<bool>> f = getForwarded();
      return f && f->size() == 2 && (*f)[side];
    }
    /// The issuing rank's field: the source's, or a pull's destination's.
    Field getIssuingRankField() {
      return getPull() ? kTargetRank : kSourceRank;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Ordering
//===----------------------------------------------------------------------===//

def Sdma_FenceOp : Sdma_ScheduleLevelOp<"fence"> {
  let summary = "order one rank's (or every rank's) ops";
  let description = [{
    Everything the rank issued before the fence completes before anything it
    issues after the fence starts. Without `on`, it is a fence on every rank
    (each rank orders its own ops; ranks do not wait for each other: that is
    `sdma.barrier`).

    ```mlir
    sdma.copy %input[0, 1] on %r -> %tmp[0, 1] on %r
    sdma.fence on %r
    sdma.copy %tmp[0, 1] on %r -> %output[0, 1] on %p
    ```

    ```
    rank r:   copy in->tmp  |fence|  copy tmp->out(p)
              (the second copy reads what the first wrote)
    ```
  }];
  let arguments = (ins Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields);
  let extraClassDeclaration = [{
    /// True when the fence applies to a single rank.
    bool hasRank() { return getStaticFields().size() == 1; }
  }];
}

def Sdma_SignalOp : Sdma_ScheduleLevelOp<"signal"> {
  let summary = "raise a flag on another rank";
  let description = [{
    `sdma.signal %a -> %b` raises a flag that rank b can wait for. It is
    raised once every op rank a issued before it has completed, so data
    written by those ops is visible to b when b's wait returns. Signals
    count: the k-th `sdma.wait %b <- %a` (same tag) matches the k-th
    signal. `tag` separates independent flags between the same pair.

    ```mlir
    sdma.copy %output[%c, 1] on %r -> %output[%c, 1] on %next
    sdma.signal %r -> %next
    ```

    ```
    rank r:     copy -> next ... done | flag[r->next] += 1
    rank next:                          wait(flag[r->next] >= k) | ...
    ```
  }];
  let arguments = (ins Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
}

def Sdma_WaitOp : Sdma_ScheduleLevelOp<"wait"> {
  let summary = "hold back a rank until a peer's signal arrives";
  let description = [{
    `sdma.wait %b <- %a`: ops that rank b issues after the wait start only
    after the matching `sdma.signal %a -> %b` (same tag) has been raised.
    The k-th wait on b for a matches the k-th signal from a to b.

    ```mlir
    sdma.wait %next <- %r
    sdma.copy %output[%c, 1] on %next -> %output[%c, 1] on %nn
    ```

    ```
    rank r:     copy -> next | signal
    rank next:  wait ........^ | copy -> nn (forwards what r wrote)
    ```
  }];
  let arguments = (ins Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields,
                       DefaultValuedAttr<I64Attr, "0">:$tag);
}

def Sdma_BarrierOp : Sdma_Op<"barrier"> {
  let summary = "order every rank's ops across all ranks";
  let description = [{
    Every op of every rank before the barrier completes before any op of any
    rank after it starts.

    ```mlir
    sdma.copy %input[0, 1] on 0 -> %tmp[0, 1] on 1
    sdma.barrier
    sdma.copy %tmp[0, 1] on 1 -> %output[0, 1] on 2
    ```

    ```
    rank 0:  copy -> tmp(1) |
    rank 1:                 |barrier|  copy tmp -> out(2)
    ```
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Engine-level synchronisation (after sdma-insert-sync)
//===----------------------------------------------------------------------===//

def Sdma_NotifyOp : Sdma_Op<"notify"> {
  let summary = "an engine adds one to a flag once its earlier ops completed";
  let description = [{
    Engine-level op, created by `sdma-insert-sync`. Engine `engine` of rank
    `rank` atomically adds 1 to flag `flag` of rank `target` once every op it
    ran before has completed (the ATOMIC ADD64 "put with signal" of SDMA, a
    `cuStreamWriteValue` on CUDA). Flag 1 of a rank counts the completions
    the host waits for; flags from 2 up order engines against each other.

    ```mlir
    sdma.copy %in[0, 1] on 0 -> %out[0, 1] on 1 {engine = 0 : i64}
    sdma.notify 0 : 0 -> 1 [2]     // rank 0 engine 0: flag 2 of rank 1 += 1
    ```

    ```
    rank 0, engine 0:  copy ... done | flag[rank 1][2] += 1
    rank 1:                            flag 2: 0 -> 1
    ```
  }];
  let arguments = (ins I64Attr:$rank, I64Attr:$engine, I64Attr:$target,
                       I64Attr:$flag);
  let assemblyFormat = "$rank `:` $engine `->` $target `[` $flag `]` attr-dict";
  let hasVerifier = 1;
}

def Sdma_PollOp : Sdma_Op<"poll"> {
  let summary = "an engine waits until a flag of its rank reaches a value";
  let description = [{
    Engine-level op, created by `sdma-insert-sync`. Engine `engine` of rank
    `rank` runs nothing after the poll until its rank's flag `flag` is at
    least `value` (POLL_REGMEM on SDMA, `cuStreamWaitValue32` on CUDA).
    Flag 0 is the launch flag that the host sets to 1 (prelaunch).

    ```mlir
    sdma.poll 1 : 0 until [2] at_least 1
    sdma.copy %out[0, 1] on 1 -> %out[0, 1] on 2 {engine = 0 : i64}
    ```

    ```
    rank 1, engine 0:  wait flag[2] >= 1 ...... | copy -> rank 2
    ```
  }];
  let arguments = (ins I64Attr:$rank, I64Attr:$engine, I64Attr:$flag,
                       I64Attr:$value);
  let assemblyFormat =
      "$rank `:` $engine `until` `[` $flag `]` `at_least` $value attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Rank arithmetic
//===----------------------------------------------------------------------===//

def Sdma_RankAddOp : Sdma_ScheduleLevelOp<"rank_add", [Pure]> {
  let summary = "a rank plus an offset, modulo the rank count";
  let description = [{
    `(rank + delta) mod R`, always in `[0, R)`, for any sign of `delta`:
    the ring neighbour, the peer `s` steps away, and so on.

    ```mlir
    %next = sdma.rank_add %r, 1
    %prev = sdma.rank_add %r, -1
    %peer = sdma.rank_add %r, %step
    ```

    ```
    R = 4:  rank_add 3, 1 = 0     rank_add 0, -1 = 3     rank_add 1, 6 = 3
    ```
  }];
  let arguments = (ins Variadic<Index>:$fields,
                       Sdma_FieldsProp:$static_fields);
  let results = (outs Index:$result);
  let hasFolder = 1;
}

def Sdma_RootOp : Sdma_Op<"root", [Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "the root of a rooted collective";
  let description = [{
    The rank a rooted schedule (`implements broadcast|scatter|gather|reduce
    (...) root N`) is rooted at: N, or the `root` given to `sdma-unroll`,
    which binds it (and makes it the schedule's declared root) before
    anything is evaluated. A schedule that names its root only through
    `sdma.root` serves every root: one text, compiled with `root=k` for
    the collective rooted at rank k (the communicator's built-ins). Only in
    a schedule that declares a root; `sdma-unroll` replaces it by its value.

    ```mlir
    sdma.schedule @broadcast ranks(%R) buffers(%input : 1, %output : 1)
        implements broadcast(%input -> %output) root 0 {
      %root = sdma.root
      affine.for %p = 0 to %R {
        sdma.copy %input[0, 1] on %root -> %output[0, 1] on %p
      }
    }
    ```

    Buffers before and after, `--sdma-unroll="ranks=3 root=1"`:

    ```
                 rank 0     rank 1     rank 2
    before in:   [ ]        [x]        [ ]
    after  out:  [x]        [x]        [x]
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Sdma_ExpertsOp : Sdma_Op<"experts", [Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "the local experts per rank of an MoE schedule";
  let description = [{
    E, the experts each rank hosts: expert e of rank p is global expert
    `p * E + e`. `sdma-unroll experts=E` binds it (the schedule then carries
    `experts = E`, and `experts x ranks` buffer sizes become `E x ranks`);
    one text serves every E, as `sdma.root` serves every root.

    ```mlir
    sdma.schedule @exchange ranks(%R)
        buffers(%send : counts[experts x ranks],
                %recv : counts[experts x ranks]) {
      %E = sdma.experts
      affine.for %r = 0 to %R {
        affine.for %p = 0 to %R {
          affine.for %e = 0 to %E {
            %i = affine.apply affine_map<(p, e)[E] -> (p * E + e)>(%p, %e)[%E]
            %j = affine.apply affine_map<(e, r)[R] -> (e * R + r)>(%e, %r)[%R]
            sdma.copy %send[%i, 1] on %r -> %recv[%j, 1] on %p
          }
        }
      }
    }
    ```

    Count tables before and after (`--sdma-unroll="ranks=2 experts=2"`;
    send is rank-major, recv expert-major):

    ```
                  rank 0          rank 1
    before send:  [a0 a1 b0 b1]   [c0 c1 d0 d1]
    after  recv:  [a0 c0 a1 c1]   [b0 d0 b1 d1]
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def Sdma_LocalRanksOp : Sdma_Op<"local_ranks", [Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "the ranks per node of a hierarchical schedule";
  let description = [{
    G, the ranks each node holds: rank r is local rank `r mod G` of node
    `r floordiv G`, and there are `R / G` nodes. `sdma-unroll local-ranks=G`
    binds it (the schedule then carries `local_ranks = G`); one text serves
    every shape, as `sdma.root` serves every root. An op whose two sides are
    on different nodes is a *network op*: the verifier proves it like any
    copy, and the node split (`sdma-translate --sdma-to-node-plan`) sends it
    through the job's transport (MPI, NCCL) instead of the node's kernels.

    ```mlir
    sdma.schedule @all_gather_hier ranks(%R) buffers(%in : 1, %out : ranks)
        implements all_gather(%in -> %out) {
      %G = sdma.local_ranks
      %N = arith.divui %R, %G : index
      // phase 1, across nodes: each rank to its peer of every other node
      affine.for %r = 0 to %R {
        affine.for %m = 0 to %N {
          ...
        }
      }
      sdma.barrier
      // phase 2, within each node ...
    }
    ```

    Buffers before and after (`--sdma-unroll="ranks=4 local-ranks=2"`,
    nodes {0, 1} and {2, 3}):

    ```
                 rank 0        rank 1        rank 2        rank 3
    before in:   [x0]          [x1]          [x2]          [x3]
    phase 1 out: [x0][ ][x2][ ] [ ][x1][ ][x3] [x0][ ][x2][ ] [ ][x1][ ][x3]
    after   out: [x0 x1 x2 x3] on every rank
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // SDMA_IR_SDMAOPS_TD
