"""Writes TpuGraphs-schema .npz files with numpy, for the reader's tests.

usage: write_tpugraphs.py OUT_DIR
Values follow formulas that tests/core/numpy_interop_test.cpp recomputes.
"""
import sys
import numpy as np

out = sys.argv[1]
n, c, nc = 5, 4, 2
node_feat = (np.arange(n * 140) % 11 * 0.25).reshape(n, 140)
opcode = np.array([63, 63, 34, 2, 97])
edges = np.array([[2, 0], [2, 1], [3, 2], [4, 3]])
ids = np.array([2, 4])
layout_neg = np.full((c, nc, 18), -1.0)
for k in range(c):
    layout_neg[k, :, 0:2] = [k % 2, 1 - k % 2]
layout_zero = np.where(layout_neg < 0, 0.0, layout_neg)
runtime = np.array([5000, 4000, 7000, 4500])

np.savez(f"{out}/layout_savez.npz",
         node_feat=node_feat.astype(np.float32), node_opcode=opcode.astype(np.int32),
         edge_index=edges.astype(np.int32), node_config_ids=ids.astype(np.int32),
         node_config_feat=layout_neg.astype(np.float32), config_runtime=runtime.astype(np.int64),
         node_splits=np.array([[0, 3]], dtype=np.int64))
# Other dtypes, 0 padding, Fortran order, deflate.
np.savez_compressed(f"{out}/layout_compressed_zero_pad.npz",
                    node_feat=np.asfortranarray(node_feat.astype(np.float64)),
                    node_opcode=opcode.astype(np.int64), edge_index=edges.astype(np.int64),
                    node_config_ids=ids.astype(np.int64),
                    node_config_feat=layout_zero.astype(np.float32),
                    config_runtime=runtime.astype(np.int32))
tile_feat = (np.arange(c * 24) % 9).reshape(c, 24).astype(np.float32)
np.savez(f"{out}/tile_savez.npz", node_feat=node_feat.astype(np.float32),
         node_opcode=opcode.astype(np.int32), edge_index=edges.astype(np.int32),
         config_feat=tile_feat, config_runtime=runtime.astype(np.int64),
         config_runtime_normalizers=np.full(c, 5000, dtype=np.int64))
np.savez_compressed(f"{out}/tile_compressed.npz", node_feat=node_feat.astype(np.float32),
                    node_opcode=opcode.astype(np.int32), edge_index=edges.astype(np.int32),
                    config_feat=tile_feat, config_runtime=runtime.astype(np.int64),
                    config_runtime_normalizers=np.full(c, 5000, dtype=np.int64))
