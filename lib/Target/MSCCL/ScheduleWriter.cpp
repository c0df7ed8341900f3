//===- ScheduleWriter.cpp - a flat schedule written op by op --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "ScheduleWriter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace sdma::msccl;

static llvm::cl::opt<std::string> elementType(
    "msccl-type",
    llvm::cl::desc("--import-msccl-xml, --import-mscclpp-json: the element "
                   "type of an algorithm that reduces (f16, bf16, f32, f64, "
                   "i8, ui8, i32, ui32, i64, ui64; default f32)"),
    llvm::cl::init("f32"));
static llvm::cl::opt<std::string> reduceOp(
    "msccl-reduce-op",
    llvm::cl::desc("--import-msccl-xml, --import-mscclpp-json: the operator "
                   "of an algorithm's reductions (sum, prod, max, min; "
                   "default sum)"),
    llvm::cl::init("sum"));

bool sdma::msccl::checkOptions(MLIRContext *context) {
  static const char *types[] = {"f16", "bf16", "f32",  "f64", "i8",
                                "ui8", "i32",  "ui32", "i64", "ui64"};
  if (llvm::find(types, elementType) == std::end(types)) {
    emitError(UnknownLoc::get(context))
        << "--msccl-type=" << elementType
        << " is not an element type (f16, bf16, f32, f64, i8, ui8, i32, "
           "ui32, i64, ui64)";
    return false;
  }
  if (reduceOp != "sum" && reduceOp != "prod" && reduceOp != "max" &&
      reduceOp != "min") {
    emitError(UnknownLoc::get(context))
        << "--msccl-reduce-op=" << reduceOp
        << " is not an operator (sum, prod, max, min)";
    return false;
  }
  return true;
}

const std::string &sdma::msccl::reduceOpOption() { return reduceOp; }

void ScheduleWriter::setShape(llvm::StringRef collective, bool inplace,
                              bool reduces, std::vector<int64_t> input,
                              std::vector<int64_t> output, int64_t scratch) {
  kind_ = collective == "allgather"   ? "all_gather"
          : collective == "allreduce" ? "all_reduce"
          : collective == "alltoall"  ? "all_to_all"
          // msccl-tools writes reduce_scatter; the runtimes read
          // reducescatter.
          : collective == "reducescatter" || collective == "reduce_scatter"
              ? "reduce_scatter"
              : "";
  inplace_ = inplace;
  typed_ = reduces || kind_ == "all_reduce" || kind_ == "reduce_scatter";
  oneBuffer_ = inplace && (kind_ == "all_reduce" || kind_ == "all_to_all" ||
                           kind_.empty());
  input_ = std::move(input);
  output_ = std::move(output);
  scratch_ = scratch;
}

std::string ScheduleWriter::misfit(int g, bool &blameInput) const {
  int64_t R = int64_t(input_.size()), in = input_[g], out = output_[g];
  blameInput = false;
  if (kind_ == "all_gather" && out != R * in)
    return "an allgather's output has ngpus x input chunks (" +
           std::to_string(R * in) + ")";
  if ((kind_ == "all_reduce" || oneBuffer_) && out != in)
    return "its output has as many chunks as its input (" + std::to_string(in) +
           ")";
  if (kind_ == "all_to_all" && (out != in || in % R)) {
    blameInput = in % R != 0;
    return "an alltoall's input and output have the same number of chunks, "
           "a multiple of ngpus";
  }
  if (kind_ == "reduce_scatter" && in != R * out) {
    blameInput = true;
    return "a reduce_scatter's input has ngpus x output chunks (" +
           std::to_string(R * out) + ")";
  }
  return "";
}

std::pair<std::string, int64_t> ScheduleWriter::where(int g, char buffer,
                                                      int64_t offset) const {
  if (buffer == 's')
    return {"%scratch", offset};
  if (oneBuffer_)
    return {"%buffer", offset};
  if (inplace_ && kind_ == "all_gather" && buffer == 'i')
    return {"%output", g * input_[g] + offset};
  if (inplace_ && kind_ == "reduce_scatter" && buffer == 'o')
    return {"%input", g * output_[g] + offset};
  return {buffer == 'i' ? "%input" : "%output", offset};
}

std::string ScheduleWriter::slice(int g, char buffer, int64_t offset,
                                  int64_t count) const {
  auto [name, at] = where(g, buffer, offset);
  return name + "[" + std::to_string(at) + ", " + std::to_string(count) +
         "] on " + std::to_string(g);
}

std::string ScheduleWriter::xferSlice(int g, int64_t slot,
                                      int64_t count) const {
  return "%xfer[" + std::to_string(slot) + ", " + std::to_string(count) +
         "] on " + std::to_string(g);
}

int64_t ScheduleWriter::xferSlot(int g, int64_t count) {
  int64_t slot = xferUsed_[g];
  xferUsed_[g] += count;
  xferChunks_ = std::max(xferChunks_, xferUsed_[g]);
  return slot;
}

Location ScheduleWriter::loc(xml::Position at) const {
  return FileLineColLoc::get(context_, file_, at.line, at.column);
}

std::string ScheduleWriter::locText(xml::Position at) const {
  std::string escaped;
  for (char c : file_) {
    if (c == '"' || c == '\\')
      escaped.push_back('\\');
    escaped.push_back(c);
  }
  return " loc(\"" + escaped + "\":" + std::to_string(at.line) + ":" +
         std::to_string(at.column) + ")";
}

void ScheduleWriter::emit(int g, xml::Position at, const std::string &op) {
  body_ += "  " + op + locText(at) + "\n";
  if (op == "sdma.fence")
    for (int r = 0; r < int(input_.size()); ++r)
      lastFence_[r] = ops_;
  else if (op.rfind("sdma.fence", 0) == 0)
    lastFence_[g] = ops_;
  ++ops_;
}

bool ScheduleWriter::fencedSince(int g, int64_t mark) const {
  auto it = lastFence_.find(g);
  return it != lastFence_.end() && it->second >= mark;
}

void ScheduleWriter::prologue(xml::Position at) {
  if (!inplace_ || kind_ != "all_gather")
    return;
  for (int g = 0; g < int(input_.size()); ++g) {
    std::string c = std::to_string(input_[g]);
    emit(g, at,
         "sdma.copy %input[0, " + c + "] on " + std::to_string(g) +
             " -> %output[" + std::to_string(g * input_[g]) + ", " + c +
             "] on " + std::to_string(g));
  }
  emit(0, at, "sdma.fence");
}

void ScheduleWriter::epilogue(xml::Position at) {
  if (!inplace_ || kind_ != "reduce_scatter")
    return;
  emit(0, at, "sdma.fence");
  for (int g = 0; g < int(input_.size()); ++g) {
    std::string c = std::to_string(output_[g]);
    emit(g, at,
         "sdma.copy %input[" + std::to_string(g * output_[g]) + ", " + c +
             "] on " + std::to_string(g) + " -> %output[0, " + c + "] on " +
             std::to_string(g));
  }
}

std::string ScheduleWriter::header(llvm::StringRef given) const {
  auto largest = [](const std::vector<int64_t> &v) {
    int64_t n = 0;
    for (int64_t x : v)
      n = std::max(n, x);
    return n;
  };
  auto decl = [&](const std::string &name, int64_t chunks) {
    return name + " : " +
           (typed_ ? elementType + "[" + std::to_string(chunks) + "]"
                   : std::to_string(chunks));
  };
  std::string name;
  for (char c : given.empty() ? llvm::StringRef("msccl") : given)
    name.push_back(llvm::isAlnum(c) ? c : '_');
  if (!llvm::isAlpha(name[0]))
    name = "msccl_" + name;
  std::vector<std::string> buffers;
  if (oneBuffer_) {
    buffers.push_back(decl("%buffer", largest(input_)));
  } else {
    buffers.push_back(decl("%input", largest(input_)));
    buffers.push_back(decl("%output", largest(output_)));
  }
  if (scratch_)
    buffers.push_back(decl("%scratch", scratch_));
  if (xferChunks_)
    buffers.push_back(decl("%xfer", xferChunks_));
  std::string text = "sdma.schedule @" + name +
                     " ranks(%R = " + std::to_string(input_.size()) +
                     ") buffers(";
  for (size_t i = 0; i < buffers.size(); ++i)
    text += (i ? ", " : "") + buffers[i];
  text += ")";
  if (!kind_.empty())
    text += " implements " + kind_ +
            (oneBuffer_ ? "(%buffer -> %buffer)" : "(%input -> %output)");
  return text + " {\n";
}

OwningOpRef<Operation *> ScheduleWriter::finish(llvm::StringRef name,
                                                xml::Position at) {
  std::string text = header(name) + body_ + "}" + locText(at) + "\n";
  ParserConfig config(context_);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module) {
    emitError(loc(at)) << "internal: the schedule written for this "
                          "algorithm does not parse";
    return nullptr;
  }
  return OwningOpRef<Operation *>(module.release());
}
