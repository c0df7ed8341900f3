// sdma-ldst: {"format": "sdma.ldst", "version": 2, "schedule": "ag", "ranks": 2, "entry": "sdma_ldst", "flag_slots": 2, "op_stride": 12, "buffers": [{"name": "in", "chunks": 1}, {"name": "out", "chunks": 2}], "collective": {"kind": "all_gather", "input": "in", "output": "out"}, "phases_per_rank": [1, 1]}
// kernel source follows
