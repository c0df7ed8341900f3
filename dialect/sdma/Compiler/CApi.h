/*===- CApi.h - the compile library's C entry (libsdma-compiler.so) -*- C -*-===
 *
 * Part of sdma, a compiler for GPU collective-communication schedules.
 *
 * The compile library (sdma::compile) as a shared library with MLIR linked
 * statically and every symbol but these hidden, so that a process can load
 * it beside hipRTC's or NVRTC's own LLVM (BUILD-NOTES #8). The runtime,
 * which holds no MLIR, dlopen()s it the way CUDA reaches NVRTC.
 *
 * Options and results are JSON, so the ABI stays four functions:
 *
 *   options: {"ranks": 8, "root": 3, "variants": ["b2b", "pcpy"],
 *             "policy": "each" | "first" | "all", "prelaunch": false,
 *             "engines": 0, "max_ops": 0, "ldst": true,
 *             "packets": "none" | "primary" | "all",
 *             "packet_completion": "atomic" | "fence",
 *             "sdma_target": "gfx9" | "gfx942" | "gfx950",
 *             "max_chunk_bytes": 0, "name": "ring.mlir"}
 *            (every field optional; see sdma::CompileOptions; "root"
 *            binds a rooted schedule's root, sdma.root)
 *   program options (sdmaCompilerCompileProgram): {"ranks": 8, "root": 3,
 *            "max_ops": 0, "name": "broadcast.mlir"} (these four only;
 *            see sdma::ProgramOptions)
 *   result:  {"format": "sdma.compile-result", "version": 2, "ok": true,
 *             "error": "", "diagnosed": false, "ranks_open": false,
 *             "diagnostics": "...", "schedule": "all_gather_ring",
 *             "ranks": 8, "proof": "proved for 8 ranks: ...",
 *             "declares_collective": true, "ldst": "<kernel source>",
 *             "variants": [{"variant": "b2b", "plan": "<plan JSON text>",
 *                           "packets": "<packet plan JSON text or empty>"}],
 *             "skipped": [{"variant": "swap", "reason": "..."}]}
 *
 *===----------------------------------------------------------------------===*/

#ifndef SDMA_COMPILER_CAPI_H
#define SDMA_COMPILER_CAPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SDMA_COMPILER_EXPORT __attribute__((visibility("default")))
#else
#define SDMA_COMPILER_EXPORT
#endif

/* Bumped when the functions or the JSON change incompatibly (2: the
 * program entry, which the runtime requires; 3: the program entry's
 * "local_ranks" and the result's "node_plan"; 4: the program entry's
 * "experts" and "major_align", and load/store programs whose copyv rows
 * carry an offset form). */
#define SDMA_COMPILER_ABI_VERSION 4

SDMA_COMPILER_EXPORT int sdmaCompilerAbiVersion(void);

/* Compiles `length` bytes of schedule text with `optionsJson` (NULL: the
 * defaults). Returns a NUL-terminated result JSON (malformed options give
 * ok = false and an error, never a crash), to be freed with
 * sdmaCompilerFree; NULL only when memory runs out. */
SDMA_COMPILER_EXPORT char *sdmaCompilerCompile(const char *schedule,
                                               size_t length,
                                               const char *optionsJson);

/* The same for the load/store program only (sdma::compileProgram): the
 * result's "ldst" holds it and "variants" is empty; no DMA plan or packets
 * are built. `optionsJson` takes the program options above; any other field
 * is an error. */
SDMA_COMPILER_EXPORT char *sdmaCompilerCompileProgram(const char *schedule,
                                                      size_t length,
                                                      const char *optionsJson);

SDMA_COMPILER_EXPORT void sdmaCompilerFree(char *result);

#ifdef __cplusplus
}
#endif

#endif /* SDMA_COMPILER_CAPI_H */
