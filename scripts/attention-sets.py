"""Does a syntax-tree model rank better when it sees a program's configurations in sets of the
size it was trained on? ast-gcn and tgraph-ast attend across the configurations they are given:
training shows them --configs (32) at a time, ranking shows them all (150-191 for the test
programs). This ranks each test program of data/halide both ways with an ast-gcn checkpoint:
all configurations at once, and in random sets of K, each configuration's cost averaged over R
random partitions (a last set that would hold one configuration is filled up from the same
permutation, and only that configuration's cost is kept). Prints the tau of each test program
both ways and the means.
  PYTHONPATH=build/python:scripts /usr/bin/python3 scripts/attention-sets.py CHECKPOINT [K] [R]"""
import sys

import numpy as np
import tcost
from test_scores import test_views


def subset(t, idx):
    """The syntax-tree dict `t` cut to configurations `idx` (in that order)."""
    no, eo = t["ast_node_offsets"], t["ast_edge_offsets"]
    parts = {"ast_node_kind": [], "ast_node_feat": [], "ast_edge_index": []}
    node_off, edge_off = [0], [0]
    for i in idx:
        parts["ast_node_kind"].append(t["ast_node_kind"][no[i]:no[i + 1]])
        parts["ast_node_feat"].append(t["ast_node_feat"][no[i]:no[i + 1]])
        parts["ast_edge_index"].append(t["ast_edge_index"][eo[i]:eo[i + 1]])
        node_off.append(node_off[-1] + no[i + 1] - no[i])
        edge_off.append(edge_off[-1] + eo[i + 1] - eo[i])
    d = {k: np.concatenate(v) for k, v in parts.items()}
    d["ast_node_offsets"] = np.array(node_off, dtype=np.int64)
    d["ast_edge_offsets"] = np.array(edge_off, dtype=np.int64)
    d["config_runtime"] = t["config_runtime"][idx]
    d["config_feat"] = t["config_feat"][idx]
    if "ast_lowering" in t:
        d["ast_lowering"] = t["ast_lowering"]
    return d


def main(path, k=32, rounds=8):
    model = tcost.Model(path, threads=1)
    rng = np.random.default_rng(0)
    whole, in_sets = [], []
    for name, _, t in zip(*test_views()):
        truth = t["config_runtime"]
        c = len(truth)
        total = np.zeros(c)
        for _ in range(rounds):
            perm = rng.permutation(c)
            for s in range(0, c, k):
                idx = perm[s:s + k]
                own = len(idx)  # a set of one is filled up; only its own cost counts
                if own < 2:
                    idx = np.concatenate([idx, perm[:k - 1]])
                cost = np.asarray(model.predict(subset(t, idx)), dtype=float)
                total[idx[:own]] += cost[:own]
        whole.append(tcost.kendall_tau(model.predict(t), truth))
        in_sets.append(tcost.kendall_tau(total, truth))
        print(f"{name}: all at once {whole[-1]:.4f}, in sets of {k} "
              f"{in_sets[-1]:.4f}", flush=True)
    print(f"mean tau: all at once {np.mean(whole):.4f}, in sets of {k} x {rounds} partitions "
          f"{np.mean(in_sets):.4f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
