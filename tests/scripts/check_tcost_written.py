"""Reads .npz files that tcost wrote, checks them against the values tests put in, and writes
them back with numpy (savez) for the C++ side to compare.

usage: check_tcost_written.py IN.npz OUT.npz CONFIGS
The expected values are those of tcost::testing::tiny_layout_graph (tests/core/test_util.h).
"""
import sys
import numpy as np

path, out, c = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = np.load(path, allow_pickle=False)
expect = {
    "node_feat": ((np.arange(5 * 140) % 7) * 0.5).reshape(5, 140).astype(np.float32),
    "node_opcode": np.array([63, 63, 34, 2, 97], dtype=np.int32),
    "edge_index": np.array([[2, 0], [2, 1], [3, 2], [4, 3]], dtype=np.int32),
    "node_config_ids": np.array([2, 4], dtype=np.int32),
    "node_config_feat": ((np.arange(c * 2 * 18) % 5) - 1).reshape(c, 2, 18).astype(np.float32),
    "config_runtime": (1000 + 37 * ((np.arange(c) * 7) % c)).astype(np.int64),
}
assert sorted(d.files) == sorted(expect), d.files
for k, v in expect.items():
    assert d[k].dtype == v.dtype, (k, d[k].dtype, v.dtype)
    assert d[k].shape == v.shape, (k, d[k].shape, v.shape)
    assert np.array_equal(d[k], v), k
np.savez(out, **{k: d[k] for k in d.files})
print("numpy read", path, "ok")
