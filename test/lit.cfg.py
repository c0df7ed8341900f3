# -*- Python -*- lit configuration for sdma.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "SDMA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sdma_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "inputs"]

config.substitutions.append(("%schedules", os.path.join(config.sdma_src_root, "schedules")))
config.substitutions.append(("%sdma_src", config.sdma_src_root))
config.substitutions.append(("%sdma_bin", config.sdma_tools_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["sdma-opt", "sdma-translate", "sdma-run", "sdma-sim"], [config.sdma_tools_dir])
