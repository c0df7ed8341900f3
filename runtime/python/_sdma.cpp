//===- _sdma.cpp - the C API for Python (pybind11) ------------------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// A thin layer over sdma.h: pointers are integers, the GIL is released
// around every call that may wait for other ranks, a failed call raises
// sdma.SdmaError carrying the C API's message and result code, and
// symmetric memory is handed to frameworks as a DLPack capsule (torch,
// CuPy, JAX take those). The Python package (sdma/__init__.py) holds the
// torch.distributed-like interface.
//
//===----------------------------------------------------------------------===//

#include "sdma/sdma.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;

namespace {

/// The error Python sees: the message, with the result code as `.result`.
struct SdmaError : std::runtime_error {
  SdmaError(sdmaResult_t result, const std::string &message)
      : std::runtime_error(message), result(result) {}
  sdmaResult_t result;
};

void check(sdmaResult_t result, sdmaComm_t comm) {
  if (result != sdmaSuccess)
    throw SdmaError(result, std::string(sdmaGetErrorString(result)) + ": " +
                                sdmaGetLastError(comm));
}

// DLPack (v0.8 ABI), declared here: the structs are a stable C ABI.
struct DLDevice {
  int32_t device_type; // 1 CPU, 2 CUDA, 10 ROCm
  int32_t device_id;
};
struct DLDataType {
  uint8_t code; // 0 int, 1 uint, 2 float, 4 bfloat
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *);
};

class Comm;

/// What a capsule's tensor keeps alive: its shape, the communicator object
/// that owns the memory, and the heap itself (the native communicator
/// counts its live tensors and frees the heap after the last, however
/// early destroy() was called).
struct Holder {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  PyObject *owner;
  Comm *native;
};

void deleteHolder(DLManagedTensor *managed);

class Schedule;

/// The options every communicator takes, as the C API's config (the
/// strings must outlive it).
sdmaConfig_t makeConfig(const std::string &device, size_t heapBytes,
                        unsigned long long timeoutMs, int checkCalls,
                        const std::string &programDirectory,
                        const std::string &path, const std::string &dmaVariant,
                        const std::string &dmaSubmit) {
  sdmaConfig_t config = SDMA_CONFIG_INITIALIZER;
  config.device = device.empty() ? nullptr : device.c_str();
  config.heapBytes = heapBytes;
  config.timeoutMs = timeoutMs;
  config.checkCalls = checkCalls;
  config.programDirectory =
      programDirectory.empty() ? nullptr : programDirectory.c_str();
  config.path = path.empty() ? nullptr : path.c_str();
  config.dmaVariant = dmaVariant.empty() ? nullptr : dmaVariant.c_str();
  config.dmaSubmit = dmaSubmit.empty() ? nullptr : dmaSubmit.c_str();
  return config;
}

/// A Python object as a multi-node communicator's transport: `rank`,
/// `world_size` and `exchange(ops)`, each op a tuple (send, peer, address,
/// bytes, host), every address host memory (a Python transport runs when
/// called, not in a stream's order, so sdma stages a GPU's buffers around
/// it); an exception from it fails the phase with its message
/// (sdma.MpiTransport is one, over mpi4py).
struct PythonTransport {
  py::object object;
  sdmaTransport_t transport{};
  std::string name;

  static sdmaResult_t exchange(void *context, const sdmaTransportOp *ops,
                               int count, sdmaStream_t, char *message,
                               size_t bytes) {
    auto *self = static_cast<PythonTransport *>(context);
    py::gil_scoped_acquire acquire;
    try {
      py::list list;
      for (int i = 0; i < count; ++i)
        list.append(py::make_tuple(ops[i].send != 0, ops[i].peer,
                                   reinterpret_cast<uintptr_t>(ops[i].buffer),
                                   ops[i].bytes, ops[i].host != 0));
      self->object.attr("exchange")(list);
      return sdmaSuccess;
    } catch (py::error_already_set &e) {
      std::snprintf(message, bytes, "%s", e.what());
      return sdmaRemoteError;
    }
  }
};

class Comm {
public:
  /// A communicator across nodes over `transport` (a Python object, see
  /// PythonTransport), `localRanks` per node (0: the launcher's).
  static Comm *multiNode(py::object transport, int localRanks,
                         const std::string &device, size_t heapBytes,
                         unsigned long long timeoutMs, int checkCalls,
                         const std::string &programDirectory,
                         const std::string &path, const std::string &dmaVariant,
                         const std::string &dmaSubmit) {
    auto made = std::unique_ptr<Comm>(new Comm());
    auto python = std::make_unique<PythonTransport>();
    python->object = transport;
    python->name = py::str(py::getattr(transport, "name", py::str("python")));
    python->transport.context = python.get();
    python->transport.rank = transport.attr("rank").cast<int>();
    python->transport.nranks = transport.attr("world_size").cast<int>();
    // A Python transport runs when called, not in a stream's order: it
    // takes host memory, and sdma stages a GPU's buffers around it.
    python->transport.deviceMemory = 0;
    python->transport.name = python->name.c_str();
    python->transport.exchange = &PythonTransport::exchange;
    sdmaConfig_t config =
        makeConfig(device, heapBytes, timeoutMs, checkCalls, programDirectory,
                   path, dmaVariant, dmaSubmit);
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaCommInitMultiNode(&made->comm_, &python->transport,
                                     localRanks, &config);
    }
    check(result, nullptr);
    made->transport_ = std::move(python);
    return made.release();
  }

  Comm(int nranks, py::bytes id, int rank, const std::string &device,
       size_t heapBytes, unsigned long long timeoutMs, int checkCalls,
       const std::string &programDirectory, const std::string &path,
       const std::string &dmaVariant, const std::string &dmaSubmit) {
    std::string bytes = id;
    if (bytes.size() != SDMA_UNIQUE_ID_BYTES)
      throw SdmaError(sdmaInvalidArgument,
                      "a unique id is " + std::to_string(SDMA_UNIQUE_ID_BYTES) +
                          " bytes");
    sdmaUniqueId uid;
    std::memcpy(uid.internal, bytes.data(), sizeof(uid.internal));
    sdmaConfig_t config =
        makeConfig(device, heapBytes, timeoutMs, checkCalls, programDirectory,
                   path, dmaVariant, dmaSubmit);
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaCommInitRankConfig(&comm_, nranks, uid, rank, &config);
    }
    check(result, nullptr);
  }
  ~Comm() { release(); }
  /// Leaves the job and frees the heap -- once the last tensor in it is
  /// gone: until then calls are refused and the tensors stay readable.
  /// Destroying twice is harmless.
  void destroy() {
    destroyed_ = true;
    if (tensors_ == 0)
      release();
  }
  sdmaComm_t get() const {
    if (!comm_ || destroyed_)
      throw SdmaError(sdmaInvalidUsage, "the communicator was destroyed");
    return comm_;
  }
  /// A tensor over the heap was made / has gone.
  void tensorMade() { ++tensors_; }
  void tensorGone() {
    if (--tensors_ == 0 && destroyed_)
      release();
  }
  int rank() const {
    int r = 0;
    check(sdmaCommUserRank(get(), &r), comm_);
    return r;
  }
  int size() const {
    int n = 0;
    check(sdmaCommCount(get(), &n), comm_);
    return n;
  }
  uintptr_t memAlloc(size_t bytes) {
    void *ptr = nullptr;
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaMemAlloc(get(), &ptr, bytes);
    }
    check(result, comm_);
    return reinterpret_cast<uintptr_t>(ptr);
  }
  void memFree(uintptr_t ptr) {
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaMemFree(get(), reinterpret_cast<void *>(ptr));
    }
    check(result, comm_);
  }
  uintptr_t memRegister(uintptr_t ptr, size_t bytes) {
    void *handle = nullptr;
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result =
          sdmaMemRegister(get(), reinterpret_cast<void *>(ptr), bytes, &handle);
    }
    check(result, comm_);
    return reinterpret_cast<uintptr_t>(handle);
  }
  void memDeregister(uintptr_t handle) {
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaMemDeregister(get(), reinterpret_cast<void *>(handle));
    }
    check(result, comm_);
  }
  /// One collective: op 0 AllGather, 1 AlltoAll, 2 Broadcast, 3 Scatter,
  /// 4 Gather.
  void collective(int op, uintptr_t send, uintptr_t recv, size_t count,
                  int type, int root, uintptr_t stream) {
    auto s = reinterpret_cast<const void *>(send);
    auto r = reinterpret_cast<void *>(recv);
    auto t = static_cast<sdmaDataType_t>(type);
    auto st = reinterpret_cast<sdmaStream_t>(stream);
    sdmaComm_t c = get();
    sdmaResult_t result = sdmaInvalidArgument;
    {
      py::gil_scoped_release release;
      switch (op) {
      case 0:
        result = sdmaAllGather(s, r, count, t, c, st);
        break;
      case 1:
        result = sdmaAlltoAll(s, r, count, t, c, st);
        break;
      case 2:
        result = sdmaBroadcast(s, r, count, t, root, c, st);
        break;
      case 3:
        result = sdmaScatter(s, r, count, t, root, c, st);
        break;
      case 4:
        result = sdmaGather(s, r, count, t, root, c, st);
        break;
      }
    }
    check(result, comm_);
  }
  /// Sends and receives, run together as one group: each (send, peer,
  /// address, bytes).
  void
  sendRecv(const std::vector<std::tuple<bool, int, uintptr_t, size_t>> &ops,
           uintptr_t stream) {
    auto st = reinterpret_cast<sdmaStream_t>(stream);
    sdmaComm_t c = get();
    sdmaResult_t result = sdmaSuccess;
    bool inGroup = false;
    {
      py::gil_scoped_release release;
      sdmaGroupStart();
      for (const auto &[send, peer, address, bytes] : ops) {
        void *buffer = reinterpret_cast<void *>(address);
        result = send ? sdmaSend(buffer, bytes, sdmaUint8, peer, c, st)
                      : sdmaRecv(buffer, bytes, sdmaUint8, peer, c, st);
        if (result != sdmaSuccess)
          break;
      }
      // A refusal inside the group: the group's end runs none of it.
      sdmaResult_t ended = sdmaGroupEnd();
      inGroup = result != sdmaSuccess;
      if (result == sdmaSuccess)
        result = ended;
    }
    // The group's error is the thread's (sdmaGroupEnd has no communicator).
    check(result, inGroup ? comm_ : nullptr);
  }
  /// One reduction: kind 0 AllReduce, 1 ReduceScatter, 2 Reduce; op as
  /// sdmaRedOp_t.
  void reduction(int kind, uintptr_t send, uintptr_t recv, size_t count,
                 int type, int op, int root, uintptr_t stream) {
    auto s = reinterpret_cast<const void *>(send);
    auto r = reinterpret_cast<void *>(recv);
    auto t = static_cast<sdmaDataType_t>(type);
    auto o = static_cast<sdmaRedOp_t>(op);
    auto st = reinterpret_cast<sdmaStream_t>(stream);
    sdmaComm_t c = get();
    sdmaResult_t result = sdmaInvalidArgument;
    {
      py::gil_scoped_release release;
      switch (kind) {
      case 0:
        result = sdmaAllReduce(s, r, count, t, o, c, st);
        break;
      case 1:
        result = sdmaReduceScatter(s, r, count, t, o, c, st);
        break;
      case 2:
        result = sdmaReduce(s, r, count, t, o, root, c, st);
        break;
      }
    }
    check(result, comm_);
  }
  /// sdmaRedOpCreatePreMulSum with the scalar at `address` in device
  /// memory (read by each call's kernel): the operator's code.
  int premulSumDevice(int type, uintptr_t address) {
    sdmaRedOp_t op = sdmaSum;
    check(sdmaRedOpCreatePreMulSum(&op, reinterpret_cast<void *>(address),
                                   static_cast<sdmaDataType_t>(type),
                                   sdmaScalarDevice, get()),
          comm_);
    return int(op);
  }
  /// sdmaRedOpCreatePreMulSum with `scalar`, a value of `type` as its
  /// bytes (host memory): the operator's code.
  int premulSum(int type, const py::bytes &scalar) {
    std::string bits = scalar;
    if (bits.size() > 8)
      throw std::invalid_argument("premul_sum: a scalar of " +
                                  std::to_string(bits.size()) + " bytes");
    bits.resize(8, '\0');
    sdmaRedOp_t op = sdmaSum;
    check(sdmaRedOpCreatePreMulSum(&op, bits.data(),
                                   static_cast<sdmaDataType_t>(type),
                                   sdmaScalarHostImmediate, get()),
          comm_);
    return int(op);
  }
  /// sdmaAlltoAllv: counts are device pointers (recvcounts may be 0).
  void allToAllv(uintptr_t send, uintptr_t sendcounts, uintptr_t recv,
                 uintptr_t recvcounts, size_t capacity, size_t rowcount,
                 int type, int layout, uintptr_t stream) {
    sdmaComm_t c = get();
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaAlltoAllv(reinterpret_cast<const void *>(send),
                             reinterpret_cast<const int64_t *>(sendcounts),
                             reinterpret_cast<void *>(recv),
                             reinterpret_cast<int64_t *>(recvcounts), capacity,
                             rowcount, static_cast<sdmaDataType_t>(type),
                             static_cast<sdmaAlltoAllvLayout_t>(layout), c,
                             reinterpret_cast<sdmaStream_t>(stream));
    }
    check(result, comm_);
  }
  /// sdmaAlltoAllv2d (combine: sdmaAlltoAllv2dOffset): device pointers.
  void allToAllv2d(bool combine, uintptr_t send, uintptr_t incounts,
                   uintptr_t recv, uintptr_t outcounts, int experts,
                   size_t capacity, size_t align, size_t rowcount, int type,
                   uintptr_t stream) {
    sdmaComm_t c = get();
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      auto in = reinterpret_cast<const int64_t *>(incounts);
      auto out = reinterpret_cast<int64_t *>(outcounts);
      auto t = static_cast<sdmaDataType_t>(type);
      auto s = reinterpret_cast<sdmaStream_t>(stream);
      result =
          combine
              ? sdmaAlltoAllv2dOffset(reinterpret_cast<const void *>(send), in,
                                      reinterpret_cast<void *>(recv), out,
                                      experts, capacity, rowcount, t, c, s)
              : sdmaAlltoAllv2d(reinterpret_cast<const void *>(send), in,
                                reinterpret_cast<void *>(recv), out, experts,
                                capacity, align, rowcount, t, c, s);
    }
    check(result, comm_);
  }
  /// 0 while every kernel has been fine; else raises with the failure.
  /// sdmaCommGetLastPath: the last collective's path and why.
  std::string lastPath() {
    const char *path = nullptr;
    check(sdmaCommGetLastPath(get(), &path), comm_);
    return path;
  }
  void asyncError() {
    sdmaResult_t async = sdmaSuccess;
    check(sdmaCommGetAsyncError(get(), &async), comm_);
    check(async, comm_);
  }
  /// sdmaCommAbort: safe while another thread is inside a call (the GIL is
  /// released there), so it takes no lock of its own.
  void abort() {
    sdmaComm_t c = get();
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaCommAbort(c);
    }
    check(result, nullptr);
  }
  /// A DLPack capsule over [ptr, ptr + shape's bytes) that keeps `owner`
  /// alive.
  py::capsule dlpack(uintptr_t ptr, std::vector<int64_t> shape, int code,
                     int bits, int deviceType, int deviceId, py::object owner) {
    get(); // not after destroy()
    auto *holder = new Holder();
    holder->shape = std::move(shape);
    holder->owner = owner.release().ptr();
    holder->native = this;
    tensorMade();
    DLTensor &t = holder->managed.dl_tensor;
    t.data = reinterpret_cast<void *>(ptr);
    t.device = {deviceType, deviceId};
    t.ndim = static_cast<int32_t>(holder->shape.size());
    t.dtype = {static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
    t.shape = holder->shape.data();
    t.strides = nullptr; // compact, row-major
    t.byte_offset = 0;
    holder->managed.manager_ctx = holder;
    holder->managed.deleter = deleteHolder;
    return py::capsule(&holder->managed, "dltensor", [](PyObject *capsule) {
      // Unconsumed (still named "dltensor"): the capsule owns the tensor.
      if (PyCapsule_IsValid(capsule, "dltensor")) {
        auto *managed = static_cast<DLManagedTensor *>(
            PyCapsule_GetPointer(capsule, "dltensor"));
        managed->deleter(managed);
      }
    });
  }

private:
  void release() {
    if (!comm_)
      return;
    py::gil_scoped_release unlocked;
    sdmaCommDestroy(comm_);
    comm_ = nullptr;
  }

  Comm() = default;

  sdmaComm_t comm_ = nullptr;
  bool destroyed_ = false;
  long tensors_ = 0;
  /// A multi-node communicator's transport (destroyed after comm_).
  std::unique_ptr<PythonTransport> transport_;
};

void deleteHolder(DLManagedTensor *managed) {
  Holder *holder = static_cast<Holder *>(managed->manager_ctx);
  PyGILState_STATE state = PyGILState_Ensure();
  holder->native->tensorGone();
  Py_XDECREF(holder->owner);
  PyGILState_Release(state);
  delete holder;
}

class Schedule {
public:
  Schedule(Comm &comm, const std::string &textOrPath) : comm_(comm) {
    sdmaResult_t result;
    sdmaComm_t c = comm.get();
    {
      py::gil_scoped_release release;
      result = sdmaScheduleLoad(c, textOrPath.c_str(), &schedule_);
    }
    check(result, c);
  }
  ~Schedule() { sdmaScheduleFree(schedule_); }
  std::vector<std::pair<std::string, long long>> buffers() const {
    int n = 0;
    check(sdmaScheduleGetBufferCount(schedule_, &n), nullptr);
    std::vector<std::pair<std::string, long long>> list;
    for (int i = 0; i < n; ++i) {
      const char *name = nullptr;
      long long chunks = 0;
      check(sdmaScheduleGetBuffer(schedule_, i, &name, &chunks), nullptr);
      list.emplace_back(name, chunks);
    }
    return list;
  }
  void launch(const std::vector<uintptr_t> &buffers, size_t count, int type,
              uintptr_t stream) {
    std::vector<void *> pointers;
    for (uintptr_t p : buffers)
      pointers.push_back(reinterpret_cast<void *>(p));
    sdmaResult_t result;
    {
      py::gil_scoped_release release;
      result = sdmaScheduleLaunch(schedule_, pointers.data(),
                                  static_cast<int>(pointers.size()), count,
                                  static_cast<sdmaDataType_t>(type),
                                  reinterpret_cast<sdmaStream_t>(stream));
    }
    check(result, comm_.get());
  }

private:
  Comm &comm_;
  sdmaSchedule_t schedule_ = nullptr;
};

} // namespace

PYBIND11_MODULE(_sdma, m) {
  m.doc() = "sdma's C API (sdma.h) for Python; use the sdma package";
  static py::exception<SdmaError> error(m, "SdmaError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const SdmaError &e) {
      // args: (message, result code)
      PyErr_SetObject(
          error.ptr(),
          py::make_tuple(e.what(), static_cast<int>(e.result)).ptr());
    }
  });
  m.def("get_unique_id", [] {
    sdmaUniqueId id;
    check(sdmaGetUniqueId(&id), nullptr);
    return py::bytes(id.internal, sizeof(id.internal));
  });
  m.def("version", [] {
    int v = 0;
    sdmaGetVersion(&v);
    return v;
  });
  m.attr("__version__") = SDMA_VERSION_STRING;
  py::class_<Comm>(m, "Comm")
      .def(py::init<int, py::bytes, int, const std::string &, size_t,
                    unsigned long long, int, const std::string &,
                    const std::string &, const std::string &,
                    const std::string &>(),
           py::arg("nranks"), py::arg("unique_id"), py::arg("rank"),
           py::arg("device") = "", py::arg("heap_bytes") = 0,
           py::arg("timeout_ms") = 0, py::arg("check_calls") = -1,
           py::arg("program_dir") = "", py::arg("path") = "",
           py::arg("dma_variant") = "", py::arg("dma_submit") = "")
      .def_static("multi_node", &Comm::multiNode, py::arg("transport"),
                  py::arg("local_ranks") = 0, py::arg("device") = "",
                  py::arg("heap_bytes") = 0, py::arg("timeout_ms") = 0,
                  py::arg("check_calls") = -1, py::arg("program_dir") = "",
                  py::arg("path") = "", py::arg("dma_variant") = "",
                  py::arg("dma_submit") = "",
                  py::return_value_policy::take_ownership)
      .def("last_path", &Comm::lastPath)
      .def("destroy", &Comm::destroy)
      .def_property_readonly("rank", &Comm::rank)
      .def_property_readonly("size", &Comm::size)
      .def("mem_alloc", &Comm::memAlloc)
      .def("mem_free", &Comm::memFree)
      .def("mem_register", &Comm::memRegister)
      .def("mem_deregister", &Comm::memDeregister)
      .def("collective", &Comm::collective)
      .def("reduction", &Comm::reduction)
      .def("premul_sum", &Comm::premulSum)
      .def("premul_sum_device", &Comm::premulSumDevice)
      .def("all_to_all_v", &Comm::allToAllv)
      .def("all_to_all_v_2d", &Comm::allToAllv2d)
      .def("send_recv", &Comm::sendRecv)
      .def("async_error", &Comm::asyncError)
      .def("abort", &Comm::abort)
      .def("dlpack", &Comm::dlpack);
  py::class_<Schedule>(m, "Schedule")
      .def(py::init<Comm &, const std::string &>(), py::keep_alive<1, 2>())
      .def("buffers", &Schedule::buffers)
      .def("launch", &Schedule::launch);
}
