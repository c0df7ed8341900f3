//===- MSCCL.h - MSCCL algorithm files in and out ----------------*- C++
//-*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// `sdma-translate --import-msccl-xml`: an MSCCL XML algorithm (what
// msccl-tools writes, what the MSCCL runtime and RCCL load) as a flat sdma
// schedule; `--sdma-to-msccl-xml`: a flat schedule as such an algorithm;
// `--import-mscclpp-json`: an MSCCL++ execution plan as a flat schedule.
// See docs/msccl.md.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_TARGET_MSCCL_H
#define SDMA_TARGET_MSCCL_H

namespace sdma {

void registerImportMscclXmlTranslation();
void registerToMscclXmlTranslation();
void registerImportMscclppJsonTranslation();

} // namespace sdma

#endif // SDMA_TARGET_MSCCL_H
