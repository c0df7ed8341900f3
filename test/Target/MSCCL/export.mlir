// RUN: sdma-translate --sdma-to-msccl-xml %s -split-input-file | FileCheck %s
// RUN: sdma-translate --sdma-to-msccl-xml %s -split-input-file -o %t.xml
// A schedule written as MSCCL's XML: a put is a send in place and a
// receive on the target just before its first op the put happens-before
// (the end if none); a reduce of a peer's data (a get) is a send on the
// peer once what the reduce follows is done, and an rrc in its place; the
// steps of a gpu run in order (a dependency on the step before when it is
// in another thread block, which then publishes: hasdep); thread blocks:
// 0 local, then per (peer, channel), channel 0 for puts, 1 for gets.

// One-shot all-reduce: both gets are sent before anything, the rrc after
// the local copy.
// CHECK: <algo name="one_shot" proto="Simple" nchannels="2" nchunksperloop="1" ngpus="2" coll="allreduce" inplace="0" outofplace="1" minBytes="0" maxBytes="0">
// CHECK-NEXT:   <gpu id="0" i_chunks="1" o_chunks="1" s_chunks="0">
// CHECK-NEXT:     <tb id="0" send="-1" recv="-1" chan="0">
// CHECK-NEXT:       <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="1" deps="0" hasdep="1"/>
// CHECK-NEXT:     </tb>
// CHECK-NEXT:     <tb id="1" send="1" recv="1" chan="1">
// CHECK-NEXT:       <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
// CHECK-NEXT:       <step s="1" type="rrc" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="0" deps="0" hasdep="0"/>
// CHECK-NEXT:     </tb>
// CHECK-NEXT:   </gpu>
sdma.schedule @one_shot ranks(%R = 2) buffers(%input : f32[1], %output : f32[1]) implements all_reduce(%input -> %output) {
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
  sdma.copy %input[0, 1] on 1 -> %output[0, 1] on 1
  sdma.fence
  sdma.reduce sum %output[0, 1] on 0 <- %input[0, 1] on 1
  sdma.reduce sum %output[0, 1] on 1 <- %input[0, 1] on 0
}

// -----

// A three-rank all-gather by forwarding, with a scratch buffer (packed into
// s): on gpu 0, rank 2's put arrives just before the wait it released, and
// rank 2's forwarded chunk at the end.
// CHECK-LABEL: <algo name="forward"
// CHECK-NEXT:   <gpu id="0" i_chunks="1" o_chunks="3" s_chunks="1">
// CHECK-NEXT:     <tb id="0" send="-1" recv="-1" chan="0">
// CHECK-NEXT:       <step s="0" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
// CHECK-NEXT:     </tb>
// CHECK-NEXT:     <tb id="1" send="1" recv="1" chan="0">
// CHECK-NEXT:       <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="0" deps="0" hasdep="1"/>
// CHECK-NEXT:       <step s="1" type="s" srcbuf="o" srcoff="2" dstbuf="o" dstoff="2" cnt="1" depid="2" deps="0" hasdep="1"/>
// CHECK-NEXT:     </tb>
// CHECK-NEXT:     <tb id="2" send="2" recv="2" chan="0">
// CHECK-NEXT:       <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="2" cnt="1" depid="1" deps="0" hasdep="1"/>
// CHECK-NEXT:       <step s="1" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="1" deps="1" hasdep="0"/>
// CHECK-NEXT:     </tb>
sdma.schedule @forward ranks(%R = 3) buffers(%input : 1, %output : 3, %tmp : 1) implements all_gather(%input -> %output) {
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 0
  sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 1
  sdma.copy %input[0, 1] on 2 -> %output[2, 1] on 2
  sdma.copy %input[0, 1] on 0 -> %output[0, 1] on 1
  sdma.copy %input[0, 1] on 1 -> %output[1, 1] on 2
  sdma.copy %input[0, 1] on 2 -> %output[2, 1] on 0
  sdma.signal 0 -> 1
  sdma.signal 1 -> 2
  sdma.signal 2 -> 0
  sdma.wait 1 <- 0
  sdma.wait 2 <- 1
  sdma.wait 0 <- 2
  sdma.copy %output[0, 1] on 1 -> %output[0, 1] on 2
  sdma.copy %output[1, 1] on 2 -> %output[1, 1] on 0
  sdma.copy %output[2, 1] on 0 -> %output[2, 1] on 1
}

// -----

// A get from rank 2 after rank 0 put what it reads there: rank 2 sends only
// once that put has landed (its receive), not at its program's start.
// CHECK-LABEL: <algo name="get_after_put"
// CHECK:        <gpu id="2"
// CHECK:          <tb id="1" send="0" recv="0" chan="0">
// CHECK-NEXT:       <step s="0" type="r" srcbuf="i" srcoff="-1" dstbuf="s" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="1"/>
// CHECK:          <tb id="2" send="1" recv="1" chan="1">
// CHECK-NEXT:       <step s="0" type="s" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="1" deps="0" hasdep="0"/>
sdma.schedule @get_after_put ranks(%R = 3) buffers(%input : f32[1], %output : f32[1], %src : f32[1]) {
  sdma.copy %input[0, 1] on 0 -> %src[0, 1] on 2
  sdma.signal 0 -> 1
  sdma.wait 1 <- 0
  sdma.copy %input[0, 1] on 1 -> %output[0, 1] on 1
  sdma.fence on 1
  sdma.reduce sum %output[0, 1] on 1 <- %src[0, 1] on 2
}
