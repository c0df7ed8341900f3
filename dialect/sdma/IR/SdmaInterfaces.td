//===- SdmaInterfaces.td - sdma op interfaces --------------*- tablegen -*-===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#ifndef SDMA_IR_SDMAINTERFACES_TD
#define SDMA_IR_SDMAINTERFACES_TD

include "mlir/IR/OpBase.td"

def Sdma_FieldsOpInterface : OpInterface<"FieldsOpInterface"> {
  let cppNamespace = "::sdma";
  let description = [{
    An op whose index-valued fields (ranks, chunk offsets, chunk counts) are
    each either a constant or an SSA value, stored like the offsets of
    `memref.subview`: `static_fields` holds one entry per field, with
    `ShapedType::kDynamic` where the field is the next `fields` operand
    (a property: see Sdma_FieldsProp).
  }];
  let methods = [
    InterfaceMethod<"the static field list (kDynamic for SSA fields)",
      "::llvm::ArrayRef<int64_t>", "getStaticFields", (ins),
      [{ return $_op.getStaticFields(); }]>,
    InterfaceMethod<"replaces the static field list (the operands of its "
      "kDynamic entries are the caller's to keep in step)", "void",
      "setStaticFields", (ins "::llvm::ArrayRef<int64_t>":$fields),
      [{ $_op.setStaticFields(fields); }]>,
    InterfaceMethod<"the dynamic field operands, in field order",
      "::mlir::OperandRange", "getFields", (ins),
      [{ return $_op.getFields(); }]>,
  ];
  let extraSharedClassDeclaration = [{
    /// Field `i` as a constant or an SSA value.
    ::mlir::OpFoldResult getField(unsigned i) {
      return ::sdma::getFieldAt($_op.getOperation(), $_op.getStaticFields(),
                                $_op.getFields(), i);
    }
    /// Field `i` if it is a constant (a static field is read as is: no
    /// attribute is built).
    std::optional<int64_t> getConstantField(unsigned i) {
      int64_t field = $_op.getStaticFields()[i];
      if (field != ::mlir::ShapedType::kDynamic)
        return field;
      return ::mlir::getConstantIntValue(getField(i));
    }
    /// True when every field is a constant.
    bool hasStaticFields() { return $_op.getFields().empty(); }
  }];
}

def Sdma_TransferOpInterface : OpInterface<"TransferOpInterface"> {
  let cppNamespace = "::sdma";
  let description = [{
    A data-movement op: it reads and writes slices (rank, buffer, chunk
    offset, chunk count). The issuing slice's rank issues it: slice 0,
    except for a pull copy (its destination, slice 1).
  }];
  let methods = [
    InterfaceMethod<"the number of slices", "unsigned", "getNumSlices", (ins)>,
    InterfaceMethod<"the slice whose rank issues the op", "unsigned",
      "getIssuingSlice", (ins), [{}], [{ return 0; }]>,
    InterfaceMethod<"true when slice `i` is read", "bool", "isSliceRead",
      (ins "unsigned":$i)>,
    InterfaceMethod<"true when slice `i` is written", "bool",
      "isSliceWritten", (ins "unsigned":$i)>,
  ];
  let extraSharedClassDeclaration = [{
    /// The rank field of the issuing slice.
    ::mlir::OpFoldResult getIssuingRankField() {
      return $_op.getSlice($_op.getIssuingSlice()).rank;
    }
    /// Slice `i`: fields 3i..3i+2 are rank, offset and count.
    ::sdma::Slice getSlice(unsigned i) {
      auto fields = ::llvm::cast<::sdma::FieldsOpInterface>($_op.getOperation());
      return ::sdma::Slice{$_op->getOperand(i), fields.getField(3 * i),
                           fields.getField(3 * i + 1),
                           fields.getField(3 * i + 2)};
    }
  }];
}

#endif // SDMA_IR_SDMAINTERFACES_TD
