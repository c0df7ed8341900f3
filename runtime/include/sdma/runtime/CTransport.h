//===- CTransport.h - a C API transport callback from C++ -------*- C++ -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// The C API's transports (sdmaTransport_t::exchange: sdma_mpi.h's,
// sdma_nccl.h's, a job's own) seen from a C++ Transport: the ops as
// sdmaTransportOp, the result as an ErrorKind. Header only, like the
// transports themselves (MpiTransport.h uses it without libsdma).
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_RUNTIME_CTRANSPORT_H
#define SDMA_RUNTIME_CTRANSPORT_H

#include "sdma/runtime/Transport.h"
#include "sdma/sdma.h"

#include <string>
#include <vector>

namespace sdma::rt {

using CExchange = sdmaResult_t (*)(void *, const sdmaTransportOp *, int,
                                   sdmaStream_t, char *, size_t);

/// Runs `ops` through `exchange` with `context`; its result, with its
/// message (possibly empty) in `message`.
inline sdmaResult_t exchangeThroughC(CExchange exchange, void *context,
                                     const std::vector<TransportOp> &ops,
                                     void *stream, std::string &message) {
  std::vector<sdmaTransportOp> list;
  list.reserve(ops.size());
  for (const TransportOp &op : ops)
    list.push_back({op.send ? 1 : 0, op.peer, op.buffer,
                    static_cast<size_t>(op.bytes), op.host ? 1 : 0});
  char text[1024] = {0};
  sdmaResult_t result =
      exchange(context, list.data(), static_cast<int>(list.size()), stream,
               text, sizeof(text));
  text[sizeof(text) - 1] = 0;
  message = text;
  return result;
}

/// The kind of error a transport's result reports.
inline ErrorKind transportErrorKind(sdmaResult_t result) {
  return result == sdmaInvalidArgument ? ErrorKind::InvalidArgument
         : result == sdmaInvalidUsage  ? ErrorKind::InvalidUsage
         : result == sdmaSystemError   ? ErrorKind::System
                                       : ErrorKind::Remote;
}

} // namespace sdma::rt

#endif // SDMA_RUNTIME_CTRANSPORT_H
