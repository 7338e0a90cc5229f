#!/usr/bin/python3
"""The Python reference of `tcost bench`: the same models in PyTorch, on the same graph.

A benchmark, not a test. It needs Debian's python3-torch (1.13, the same libtorch and OpenBLAS
as tcost) and numpy: `apt-get install python3-torch`.

    build/tcost bench --models-only --export DIR
    /usr/bin/python3 scripts/bench-python.py DIR [--repeats 3] [--json OUT]

For each model that tcost exported (DIR/NAME.npz and DIR/NAME.json), it builds the model below,
a line-for-line copy of src/model/models.cpp written as one would in Python, loads tcost's
weights by name (strict), checks that its scores equal tcost's and rank the configurations
identically, then times inference (every configuration, in tcost's chunks, under
torch.inference_mode) and one training step (hinge loss, AdamW) exactly as tcost's benchmark
does, on tcost's thread count. scripts/bench-vs-python.sh runs both side by side.
"""
import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

LAYOUT_VALUES = 8
NUM_OPCODES = 121


def mean_aggregate(g, x):
    if g["src"].numel() == 0:
        return torch.zeros_like(x)
    return torch.zeros_like(x).index_add(1, g["dst"], x.index_select(1, g["src"])) * g["inv_deg"]


def gcn_aggregate(g, x):
    out = x * g["self_norm"]
    if g["src"].numel() == 0:
        return out
    return out.index_add(1, g["dst"], x.index_select(1, g["src"]) * g["gcn_norm"])


class InputEncoder(nn.Module):
    MATCH_FEATURES = 3

    def __init__(self, dims, hidden, opcode_dim, categorical, embed_dim):
        super().__init__()
        self.collection = dims["collection"]
        self.width = dims["config_feat_width"]
        self.categorical = categorical
        self.opcode = nn.Embedding(NUM_OPCODES, opcode_dim)
        self.node = nn.Linear(dims["node_feat_width"] + opcode_dim, hidden)
        if self.collection == "layout" and categorical:
            self.slot_value = nn.Embedding(self.width * LAYOUT_VALUES, embed_dim)
            self.config = nn.Linear(self.width * embed_dim, hidden)
            self.physical = nn.Linear(self.width + self.MATCH_FEATURES, hidden)
            self.sentinel = nn.Parameter(torch.zeros(hidden))
            self.register_buffer("slot_offset", torch.arange(self.width) * LAYOUT_VALUES)
        else:
            self.config = nn.Linear(self.width, hidden)
        self.register_buffer("tile_mean", torch.zeros(self.width))
        self.register_buffer("tile_std", torch.ones(self.width))

    def forward(self, g, configs):
        base = self.node(torch.cat([g["node_feat"], self.opcode(g["opcode"])], 1))
        k = configs.size(0)
        if self.collection == "tile":
            c = self.config((torch.log1p(configs.clamp_min(0)) - self.tile_mean) / self.tile_std)
            return base.unsqueeze(0) + c.unsqueeze(1)
        if self.categorical:
            v = (configs + 1).clamp(0, LAYOUT_VALUES - 1).long() + self.slot_offset
            c = (self.config(self.slot_value(v).flatten(2)) +
                 self.physical(self.physical_shape(g, configs)) - self.sentinel)
        else:
            c = self.config((configs + 1) / 6.0)
        x = base.unsqueeze(0).expand(k, g["num_nodes"], base.size(1))
        if self.categorical:
            x = x + self.sentinel
        return x.index_add(1, g["config_pos"], c)

    def physical_shape(self, g, configs):
        k, nc = configs.size(0), configs.size(1)
        parts = []
        owners = [g["config_pos"], g["operands"].select(1, 0), g["operands"].select(1, 1)]
        for t in range(3):
            if 6 * t + 6 > self.width:
                break
            slots = configs.narrow(2, 6 * t, 6)
            valid = (slots >= 0).float()
            idx = slots.clamp(0, 5).long()
            d = g["dims"].index_select(0, owners[t]).unsqueeze(0).expand(k, nc, 6)
            parts.append(d.gather(2, idx) * valid)
        out = torch.cat(parts, 2)
        if out.size(2) < self.width:
            out = torch.cat([out, torch.zeros(k, nc, self.width - out.size(2))], 2)
        return torch.cat([out, self.layout_matches(g, configs)], 2)

    def layout_matches(self, g, configs):
        k, nc = configs.size(0), configs.size(1)
        flags = []
        for t in range(2):
            if 6 * t + 12 > self.width:
                break
            expected = configs.narrow(2, 6 * (t + 1), 6)
            oc = g["operand_config"].select(1, t)
            configured = configs.index_select(1, oc.clamp_min(0)).narrow(2, 0, 6)
            fixed = g["node_layout"].index_select(0, g["operands"].select(1, t)).unsqueeze(0).expand(
                k, nc, 6)
            produced = torch.where((oc >= 0).view(1, nc, 1), configured, fixed)
            present = (g["operands"].select(1, t) < g["num_nodes"]).view(1, nc).float()
            flags.append(((produced == expected).all(2).float() * present).unsqueeze(2))
        own = g["node_layout"].index_select(0, g["config_pos"]).unsqueeze(0).expand(k, nc, 6)
        flags.append((configs.narrow(2, 0, 6) == own).all(2).float().unsqueeze(2))
        while len(flags) < self.MATCH_FEATURES:
            flags.append(torch.zeros(k, nc, 1))
        return torch.cat(flags, 2)


class ResidualGcn(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        for l in range(layers):
            self.add_module(f"gcn{l}", nn.Linear(hidden, hidden))
        self.layers = layers
        self.head1 = nn.Linear(2 * hidden, hidden)
        self.head2 = nn.Linear(hidden, 1)

    def propagate(self, g, x):
        for l in range(self.layers):
            x = x + torch.relu(gcn_aggregate(g, getattr(self, f"gcn{l}")(x)))
        return x

    def head(self, mean, scaled_sum):
        return self.head2(torch.relu(self.head1(torch.cat([mean, scaled_sum], 1)))).squeeze(1)


class GcnBaseline(nn.Module):
    def __init__(self, o, dims):
        super().__init__()
        self.encoder = InputEncoder(dims, o["hidden"], o["opcode_dim"], False, 0)
        self.gcn = ResidualGcn(o["hidden"], o["layers"])

    def forward(self, g, configs):
        x = self.gcn.propagate(g, torch.relu(self.encoder(g, configs)))
        return self.gcn.head(x.mean(1), x.sum(1) / math.sqrt(g["num_nodes"]))


class SageBlock(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.add_module("self", nn.Linear(h, h))
        self.neigh = nn.Linear(h, h, bias=False)
        self.norm = nn.LayerNorm(h)

    def forward(self, g, x):
        return x + F.gelu(self.norm(self._modules["self"](x) + self.neigh(mean_aggregate(g, x))))


class Sage(nn.Module):
    def __init__(self, o, dims):
        super().__init__()
        self.encoder = InputEncoder(dims, o["hidden"], o["opcode_dim"], False, 0)
        self.layers = o["layers"]
        for l in range(self.layers):
            self.add_module(f"sage{l}", SageBlock(o["hidden"]))
        self.head = nn.Linear(o["hidden"], 1)

    def forward(self, g, configs):
        x = F.gelu(self.encoder(g, configs))
        for l in range(self.layers):
            x = getattr(self, f"sage{l}")(g, x)
        return self.head(x.mean(1)).squeeze(1)


class SqueezeExcite(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.fc1 = nn.Linear(h, max(4, h // 4))
        self.fc2 = nn.Linear(max(4, h // 4), h)

    def forward(self, x):
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(x.mean(1))))).unsqueeze(1)


class CrossConfigAttention(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.score = nn.Linear(h, h // 2)
        self.value = nn.Linear(h, h - h // 2)
        self.plain = nn.Linear(h, h // 2)
        self.temperature = nn.Parameter(torch.full((1,), 0.5))

    def forward(self, x):
        t = self.temperature.abs().clamp_min(1e-2)
        w = torch.softmax(self.score(x) / t, 0) * float(x.size(0))
        v = self.value(x)
        half = min(v.size(2), w.size(2))
        weighted = v.narrow(2, 0, half) * w.narrow(2, 0, half)
        if v.size(2) > half:
            weighted = torch.cat([weighted, v.narrow(2, half, v.size(2) - half)], 2)
        return torch.cat([self.plain(x), weighted], 2)


class TGraph(nn.Module):
    def __init__(self, o, dims):
        super().__init__()
        self.encoder = InputEncoder(dims, o["hidden"], o["opcode_dim"], True, o["config_embed_dim"])
        self.norm = nn.LayerNorm(o["hidden"])
        self.se = SqueezeExcite(o["hidden"])
        self.cross_attention = CrossConfigAttention(o["hidden"]) if o["cross_attention"] else None
        self.layers = o["layers"]
        for l in range(self.layers):
            self.add_module(f"sage{l}", SageBlock(o["hidden"]))
        self.head = nn.Linear(o["hidden"], 1)

    def forward(self, g, configs):
        x = self.se(self.norm(self.encoder(g, configs)))
        if self.cross_attention is not None:
            x = self.cross_attention(x)
        x = F.gelu(x)
        for l in range(self.layers):
            x = getattr(self, f"sage{l}")(g, x)
        return self.head(x.mean(1)).squeeze(1)


MODELS = {"gcn-baseline": GcnBaseline, "sage": Sage, "tgraph": TGraph}


def hinge_loss(cost, target, margin):
    faster = (target.unsqueeze(1) < target.unsqueeze(0)).to(cost.dtype)
    diff = cost.unsqueeze(0) - cost.unsqueeze(1)
    pairs = faster.sum().clamp_min(1)
    return (torch.relu(margin - diff) * faster).sum() / pairs


def best_seconds(repeats, f):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def pair_agreement(a, b):
    """Fraction of configuration pairs that a and b order the same way (1.0: identical ranks)."""
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    return float((da == db).mean())


def bench_one(npz_path, repeats):
    facts = json.loads(npz_path.with_suffix(".json").read_text())
    z = np.load(npz_path)
    g = {k[3:]: torch.from_numpy(z[k]) for k in z.files if k.startswith("in.")}
    g["num_nodes"] = int(facts["num_nodes"])
    configs = torch.from_numpy(z["configs"])
    targets = torch.from_numpy(z["targets"])
    dims = {"collection": facts["collection"], "node_feat_width": g["node_feat"].size(1),
            "config_feat_width": configs.size(-1)}
    torch.manual_seed(facts["seed"])
    m = MODELS[facts["model"]](facts["options"], dims)
    state = {k[2:]: torch.from_numpy(z[k]) for k in z.files if k[:2] in ("p.", "b.")}
    m.load_state_dict(state, strict=True)
    chunk, c = facts["chunk"], configs.size(0)

    m.eval()
    with torch.inference_mode():
        def run():
            return [m(g, configs[s:s + chunk]) for s in range(0, c, chunk)]
        scores = torch.cat(run()).numpy()
        inference_s = best_seconds(repeats, run)
    ours = z["scores"]
    max_rel = float(np.max(np.abs(scores - ours)) / max(1e-12, float(np.max(np.abs(ours)))))
    agreement = pair_agreement(scores, ours)

    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=facts["lr"])
    k = facts["train_configs"]
    batch_configs, batch_targets = configs[:k].clone(), targets[:k].clone()

    def step():
        opt.zero_grad()
        hinge_loss(m(g, batch_configs), batch_targets, facts["margin"]).backward()
        opt.step()
    step()
    step_s = best_seconds(repeats, step)
    return {"model": facts["model"], "num_nodes": g["num_nodes"], "configs": c, "chunk": chunk,
            "inference_s": inference_s, "train_step_s": step_s, "max_rel_diff": max_rel,
            "pair_agreement": agreement,
            "tcost_inference_s": facts["inference_s"], "tcost_train_step_s": facts["train_step_s"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=pathlib.Path, help="what `tcost bench --export DIR` wrote")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    args = ap.parse_args()
    files = sorted(args.dir.glob("*.npz"))
    if not files:
        sys.exit(f"bench-python: no exported models in {args.dir} (run tcost bench --export)")
    threads = json.loads(files[0].with_suffix(".json").read_text())["intra_op_threads"]
    torch.set_num_threads(threads)
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, intra-op threads "
          f"{torch.get_num_threads()}")
    results = []
    for f in files:
        r = bench_one(f, args.repeats)
        results.append(r)
        print(f"{r['model']:<13} nodes {r['num_nodes']:>4}  inference {r['configs'] / r['inference_s']:>9.0f} "
              f"configs/s  train step (K=32) {r['train_step_s'] * 1e3:.1f} ms  scores: max rel diff "
              f"{r['max_rel_diff']:.1e}, pair order agreement {r['pair_agreement']:.6f}")
        if r["pair_agreement"] < 0.999 or r["max_rel_diff"] > 1e-3:
            sys.exit(f"bench-python: {r['model']} does not compute tcost's scores; the copy is wrong")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
