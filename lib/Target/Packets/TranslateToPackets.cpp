//===- TranslateToPackets.cpp - sdmapkt -> packet images and listing ------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
// Packet layouts: ../shared/SDMA-PACKETS.md (gfx9.4.x). Fields this encoder
// leaves zero (cache policies, swizzles, FENCE mtype/sys/snoop bits, HDP
// flush) are the defaults the public sources use for plain linear copies.
//
//===----------------------------------------------------------------------===//

#include "sdma/InitAllDialects.h"
#include "sdma/Target/Packets.h"
#include "sdmapkt/IR/SdmaPkt.h"

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace sdma;
using namespace sdma::pkt;
using json = nlohmann::ordered_json;

namespace {
/// One encoded queue: its dwords, its relocations, and per packet the
/// listing text of its fields (from the IR, not from the bits).
struct EncodedQueue {
  int64_t rank = 0, engine = 0;
  std::vector<uint32_t> dwords;
  json relocs = json::array();
  struct Packet {
    size_t first = 0, size = 0;
    std::string name, fields;
  };
  std::vector<Packet> packets;
};

class Encoder {
public:
  explicit Encoder(EncodedQueue &q) : q(q) {}

  /// Appends a 64-bit address (two dwords) and its relocation, if any.
  void address(Attribute attr) {
    size_t at = q.dwords.size();
    uint64_t raw = 0;
    if (auto chunk = dyn_cast<ChunkAttr>(attr))
      q.relocs.push_back({{"dword", at},
                          {"kind", "chunk"},
                          {"buffer", chunk.getBuffer().str()},
                          {"rank", chunk.getRank()},
                          {"chunk", chunk.getChunk()}});
    else if (auto flag = dyn_cast<FlagAttr>(attr))
      q.relocs.push_back({{"dword", at},
                          {"kind", "flag"},
                          {"rank", flag.getRank()},
                          {"slot", flag.getSlot()}});
    else if (auto ts = dyn_cast<TimestampAttr>(attr))
      q.relocs.push_back({{"dword", at},
                          {"kind", "timestamp"},
                          {"rank", ts.getRank()},
                          {"index", ts.getIndex()}});
    else
      raw = static_cast<uint64_t>(cast<IntegerAttr>(attr).getInt());
    q.dwords.push_back(static_cast<uint32_t>(raw));
    q.dwords.push_back(static_cast<uint32_t>(raw >> 32));
  }
  /// Appends a count dword: bytes - 1 in bits [29:0] (the verifier keeps
  /// raw counts within the target's width).
  void count(Attribute attr) {
    size_t at = q.dwords.size();
    if (auto chunks = dyn_cast<ChunksAttr>(attr)) {
      q.relocs.push_back(
          {{"dword", at}, {"kind", "count"}, {"chunks", chunks.getCount()}});
      q.dwords.push_back(0);
      return;
    }
    q.dwords.push_back(
        static_cast<uint32_t>(cast<IntegerAttr>(attr).getInt() - 1) &
        0x3fffffffu);
  }
  void dword(uint32_t value) { q.dwords.push_back(value); }

  EncodedQueue &q;
};

std::string addressText(Attribute attr) {
  if (auto chunk = dyn_cast<ChunkAttr>(attr))
    return chunk.getBuffer().str() + "@r" + std::to_string(chunk.getRank()) +
           "+c" + std::to_string(chunk.getChunk());
  if (auto flag = dyn_cast<FlagAttr>(attr))
    return "flag@r" + std::to_string(flag.getRank()) + "[" +
           std::to_string(flag.getSlot()) + "]";
  if (auto ts = dyn_cast<TimestampAttr>(attr))
    return "ts@r" + std::to_string(ts.getRank()) + "[" +
           std::to_string(ts.getIndex()) + "]";
  return "0x" + llvm::utohexstr(cast<IntegerAttr>(attr).getInt());
}

std::string countText(Attribute attr) {
  if (auto chunks = dyn_cast<ChunksAttr>(attr))
    return std::to_string(chunks.getCount()) + "ch";
  return std::to_string(cast<IntegerAttr>(attr).getInt()) + "B";
}

constexpr uint32_t op(uint32_t opcode, uint32_t subOp = 0) {
  return opcode | subOp << 8;
}

/// Encodes one packet op; returns its listing name and fields.
std::pair<std::string, std::string> encode(Operation *packet, Encoder &e) {
  return llvm::TypeSwitch<Operation *, std::pair<std::string, std::string>>(
             packet)
      .Case([&](CopyLinearOp p) {
        e.dword(op(1, 0));
        e.count(p.getCount());
        e.dword(0);
        e.address(p.getSrc());
        e.address(p.getDst());
        return std::make_pair("COPY_LINEAR",
                              "src=" + addressText(p.getSrc()) +
                                  " dst=" + addressText(p.getDst()) +
                                  " count=" + countText(p.getCount()));
      })
      .Case([&](CopyBroadcastOp p) {
        e.dword(op(1, 0) | 1u << 27);
        e.count(p.getCount());
        e.dword(0);
        e.address(p.getSrc());
        e.address(p.getDst0());
        e.address(p.getDst1());
        return std::make_pair("COPY_BROADCAST",
                              "src=" + addressText(p.getSrc()) +
                                  " dst0=" + addressText(p.getDst0()) +
                                  " dst1=" + addressText(p.getDst1()) +
                                  " count=" + countText(p.getCount()));
      })
      .Case([&](CopySwapOp p) {
        e.dword(op(1, 9));
        e.count(p.getCount());
        e.dword(0);
        e.address(p.getA());
        e.address(p.getB());
        return std::make_pair("COPY_SWAP",
                              "a=" + addressText(p.getA()) +
                                  " b=" + addressText(p.getB()) +
                                  " count=" + countText(p.getCount()));
      })
      .Case([&](pkt::FenceOp p) {
        e.dword(op(5));
        e.address(p.getAddr());
        e.dword(static_cast<uint32_t>(p.getValue()));
        return std::make_pair("FENCE",
                              "addr=" + addressText(p.getAddr()) +
                                  " value=" + std::to_string(p.getValue()));
      })
      .Case([&](AtomicAdd64Op p) {
        e.dword(op(10) | 47u << 25);
        e.address(p.getAddr());
        uint64_t value = p.getValue();
        e.dword(static_cast<uint32_t>(value));
        e.dword(static_cast<uint32_t>(value >> 32));
        e.dword(0);
        e.dword(0);
        e.dword(0);
        return std::make_pair("ATOMIC_ADD64",
                              "addr=" + addressText(p.getAddr()) + " value=" +
                                  std::to_string(p.getValueAttr().getInt()));
      })
      .Case([&](PollRegMemOp p) {
        uint32_t func = *pollFunctionCode(p.getFunc());
        e.dword(op(8) | func << 28 | 1u << 31);
        e.address(p.getAddr());
        e.dword(static_cast<uint32_t>(p.getReference()));
        e.dword(static_cast<uint32_t>(p.getMask()));
        e.dword(static_cast<uint32_t>(p.getInterval()) |
                static_cast<uint32_t>(p.getRetry()) << 16);
        return std::make_pair(
            "POLL_REGMEM", "addr=" + addressText(p.getAddr()) +
                               " func=" + p.getFunc().str() +
                               " ref=" + std::to_string(p.getReference()) +
                               " mask=0x" + llvm::utohexstr(p.getMask()) +
                               " interval=" + std::to_string(p.getInterval()) +
                               " retry=" + std::to_string(p.getRetry()));
      })
      .Case([&](NopOp p) {
        e.dword(op(0) | static_cast<uint32_t>(p.getExtra()) << 16);
        for (uint64_t i = 0; i < p.getExtra(); ++i)
          e.dword(0);
        return std::make_pair("NOP", "extra=" + std::to_string(p.getExtra()));
      })
      .Case([&](TimestampOp p) {
        e.dword(op(13, 2));
        e.address(p.getAddr());
        return std::make_pair("TIMESTAMP", "addr=" + addressText(p.getAddr()));
      })
      .Case([&](TrapOp p) {
        e.dword(op(6));
        e.dword(static_cast<uint32_t>(p.getContext()) & 0x0fffffffu);
        return std::make_pair("TRAP",
                              "context=" + std::to_string(p.getContext()));
      });
}

/// The profile as the packet plan records it.
json targetJson(const TargetProfile &profile) {
  return {{"name", profile.name.str()},
          {"count_bits", profile.countBits},
          {"max_copy_bytes", profile.maxCopyBytes()},
          {"swap", profile.swap},
          {"max_swap_bytes", profile.maxSwapBytes()},
          {"nop_count", profile.nopCount}};
}

/// The listing's first line; the runtime's packetListing prints the same
/// from the plan's "target".
std::string targetLine(const TargetProfile &profile) {
  std::string line = "target " + profile.name.str() + " (copy " +
                     std::to_string(profile.maxCopyBytes()) + " bytes, ";
  line += profile.swap
              ? "swap " + std::to_string(profile.maxSwapBytes()) + " bytes, "
              : std::string("no swap, ");
  return line + (profile.nopCount ? "NOP count)" : "no NOP count)");
}

FailureOr<ProgramOp> onlyProgram(ModuleOp module) {
  auto programs = llvm::to_vector(module.getOps<ProgramOp>());
  if (programs.size() != 1)
    return module.emitError("expected exactly one sdmapkt.program (run "
                            "--convert-sdma-to-sdmapkt), found ")
           << programs.size();
  // The verifier refuses unknown targets; an unverified module still gets
  // an error, not a null profile.
  if (!programs.front().getProfile())
    return programs.front().emitOpError("unknown target '")
           << programs.front().getTarget() << "' (" << targetNameList() << ")";
  return programs.front();
}

std::vector<EncodedQueue> encodeProgram(ProgramOp program) {
  std::vector<EncodedQueue> queues;
  for (auto queue : program.getBody().front().getOps<QueueOp>()) {
    EncodedQueue q;
    q.rank = queue.getRankAttr().getInt();
    q.engine = queue.getEngineAttr().getInt();
    Encoder e(q);
    for (Operation &packet : queue.getBody().front()) {
      size_t first = q.dwords.size();
      auto [name, fields] = encode(&packet, e);
      q.packets.push_back({first, q.dwords.size() - first, name, fields});
    }
    queues.push_back(std::move(q));
  }
  return queues;
}
} // namespace

LogicalResult sdma::translateToPackets(ModuleOp module, raw_ostream &os) {
  FailureOr<ProgramOp> found = onlyProgram(module);
  if (failed(found))
    return failure();
  ProgramOp program = *found;
  json buffers = json::array();
  for (auto [name, chunks] :
       llvm::zip(program.getBuffers(), program.getBufferChunks()))
    buffers.push_back({{"name", cast<StringAttr>(name).getValue().str()},
                       {"chunks", cast<IntegerAttr>(chunks).getInt()}});
  // Count tables (64-bit entries, not chunks): no packet touches them.
  if (auto tables =
          program->getAttrOfType<DenseI64ArrayAttr>("sdmapkt.count_buffers"))
    for (int64_t index : tables.asArrayRef())
      if (index >= 0 && size_t(index) < buffers.size())
        buffers[index]["counts"] = true;
  json collective = nullptr;
  if (auto dict =
          program->getAttrOfType<DictionaryAttr>("sdmapkt.collective")) {
    collective = json::object();
    for (NamedAttribute field : dict) {
      if (auto s = dyn_cast<StringAttr>(field.getValue()))
        collective[field.getName().str()] = s.getValue().str();
      else if (auto i = dyn_cast<IntegerAttr>(field.getValue()))
        collective[field.getName().str()] = i.getInt();
    }
  }
  json done = json::array();
  for (Attribute a : program.getDone())
    done.push_back(cast<IntegerAttr>(a).getInt());
  json queues = json::array();
  for (EncodedQueue &q : encodeProgram(program)) {
    std::string bytes(q.dwords.size() * 4, '\0');
    for (size_t i = 0; i < q.dwords.size(); ++i)
      for (int k = 0; k < 4; ++k)
        bytes[4 * i + k] = static_cast<char>(q.dwords[i] >> (8 * k));
    queues.push_back({{"rank", q.rank},
                      {"engine", q.engine},
                      {"dwords", q.dwords.size()},
                      {"image", llvm::encodeBase64(bytes)},
                      {"relocs", std::move(q.relocs)}});
  }
  json plan{{"format", "sdma.packets"},
            {"version", kPacketPlanVersion},
            {"program", program.getSymName().str()},
            {"target", targetJson(*program.getProfile())},
            {"ranks", program.getRanksAttr().getInt()},
            {"collective", std::move(collective)},
            {"buffers", std::move(buffers)},
            {"flags", program.getFlagsAttr().getInt()},
            {"timestamps", program.getTimestampsAttr().getInt()},
            {"chunk_align", program.getChunkAlignAttr().getInt()},
            {"max_chunk_bytes", program.getMaxChunkBytesAttr().getInt()},
            {"done", std::move(done)},
            {"queues", std::move(queues)}};
  os << plan.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  return success();
}

LogicalResult sdma::translateToPacketListing(ModuleOp module, raw_ostream &os) {
  FailureOr<ProgramOp> found = onlyProgram(module);
  if (failed(found))
    return failure();
  os << targetLine(*found->getProfile()) << "\n";
  for (EncodedQueue &q : encodeProgram(*found)) {
    os << "queue " << q.rank << ":" << q.engine << " (" << q.dwords.size()
       << " dwords)\n";
    for (const EncodedQueue::Packet &p : q.packets) {
      os << llvm::format("  0x%04x  ", static_cast<unsigned>(p.first * 4))
         << llvm::left_justify(p.name, 14) << " " << p.fields << "  [";
      for (size_t i = 0; i < p.size; ++i)
        os << (i ? " " : "") << llvm::format("%08x", q.dwords[p.first + i]);
      os << "]\n";
    }
  }
  return success();
}

void sdma::registerToPacketsTranslation() {
  TranslateFromMLIRRegistration packets(
      "sdma-to-packets",
      "write an sdmapkt.program as per-queue packet images with relocations",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return translateToPackets(module, os);
      },
      registerAllDialects);
  TranslateFromMLIRRegistration listing(
      "sdma-to-packet-listing",
      "print an sdmapkt.program one packet per line (offset, name, fields, "
      "dwords)",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return translateToPacketListing(module, os);
      },
      registerAllDialects);
}
