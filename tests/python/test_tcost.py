"""Tests of the Python module `tcost` (docs/python.md), with Python's unittest and numpy only.

Run by ctest as: PYTHONPATH=build/python TCOST_BIN=build/tcost python3 -m unittest test_tcost
(from tests/python). TCOST_ROOT is the repository (for data/halide and the shipped model).
"""
import csv
import itertools
import json
import math
import os
import random
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import tcost

ROOT = os.environ.get("TCOST_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("TCOST_BIN", os.path.join(ROOT, "build", "tcost"))
MODEL = os.path.join(ROOT, "models", "tgraph-halide.pt")
TEST_DIR = os.path.join(ROOT, "data", "halide", "layout", "test")
GRAPH = os.path.join(TEST_DIR, "conv1x1_28x64x128.npz")


def tiny_layout():
    """A valid 5-node layout graph with 3 configurations (the C++ tests' tiny graph's shape)."""
    rng = np.random.default_rng(3)
    return {
        "node_feat": rng.random((5, 140), dtype=np.float32),
        "node_opcode": np.array([63, 63, 34, 2, 97], dtype=np.int32),
        "edge_index": np.array([[2, 0], [2, 1], [3, 2], [4, 3]], dtype=np.int32),
        "node_config_ids": np.array([2, 4], dtype=np.int32),
        "node_config_feat": rng.integers(-1, 4, (3, 2, 18)).astype(np.float32),
        "config_runtime": np.array([5000, 4000, 7000], dtype=np.int64),
    }


def tau_reference(x, y):
    """Kendall's tau-b, by its definition over all pairs."""
    conc = disc = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tx += 1
        elif dy == 0:
            ty += 1
        elif dx == dy:
            conc += 1
        else:
            disc += 1
    den = math.sqrt((conc + disc + tx) * (conc + disc + ty))
    return (conc - disc) / den if den > 0 else float("nan")


def opa_reference(pred, truth):
    score = total = 0.0
    for i, j in itertools.permutations(range(len(pred)), 2):
        if truth[i] < truth[j]:
            total += 1
            score += 1.0 if pred[i] < pred[j] else 0.5 if pred[i] == pred[j] else 0.0
    return score / total


def slowdown_reference(pred, truth, k):
    top = np.argsort(np.asarray(pred), kind="stable")[:k]
    return min(truth[i] for i in top) / min(truth) - 1


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = lambda name: os.path.join(self.dir.name, name)

    def tearDown(self):
        self.dir.cleanup()

    def test_save_and_load_round_trip_against_numpy(self):
        g = tiny_layout()
        for compress in (False, True):
            tcost.save(self.path("g.npz"), g, compress=compress)
            with np.load(self.path("g.npz")) as back:  # numpy reads what tcost wrote
                self.assertEqual(sorted(back.files), sorted(g))
                for k in g:
                    np.testing.assert_array_equal(back[k], g[k])
                    self.assertEqual(back[k].dtype, g[k].dtype)
        # tcost reads what numpy wrote: other dtypes, Fortran order, deflate.
        other = dict(g)
        other["node_feat"] = np.asfortranarray(g["node_feat"].astype(np.float64))
        other["edge_index"] = g["edge_index"].astype(np.int64)
        np.savez_compressed(self.path("np.npz"), **other)
        back = tcost.load(self.path("np.npz"))
        for k in other:
            np.testing.assert_array_equal(back[k], other[k])
            self.assertEqual(back[k].dtype, other[k].dtype)

    def test_shipped_files_load(self):
        g = tcost.load(GRAPH)
        self.assertEqual(g["node_config_feat"].shape[0], g["config_runtime"].shape[0])
        ast = tcost.load(os.path.join(ROOT, "data", "halide", "ast", "test", "conv1x1_28x64x128.npz"))
        self.assertIn("ast_node_kind", ast)

    def expect_error(self, arrays, *parts):
        tcost.save(self.path("bad.npz"), arrays)
        with self.assertRaises(tcost.Error) as ctx:
            tcost.load(self.path("bad.npz"))
        self.assertIsInstance(ctx.exception, ValueError)
        for p in parts:
            self.assertIn(p, str(ctx.exception))
        return str(ctx.exception)

    def test_malformed_files_raise_the_readers_message(self):
        # The semantic errors of tests/core/malformed_test.cpp.
        def with_key(key, value):
            g = tiny_layout()
            if value is None:
                del g[key]
            else:
                g[key] = value
            return g

        self.expect_error(with_key("config_runtime", None), "config_runtime", "missing")
        self.expect_error(with_key("edge_index", np.zeros((4, 2), np.float32)),
                          "edge_index", "integer", "<f4")
        self.expect_error(with_key("edge_index", np.array([[2, 0], [2, 1], [3, 2], [5, 3]], np.int32)),
                          "edge_index", "[0, 5)", "5")
        self.expect_error(with_key("node_config_ids", np.array([4, 4], np.int32)),
                          "node_config_ids", "distinct", "4")
        self.expect_error(with_key("config_runtime", np.array([5, -1, 7], np.int64)),
                          "config_runtime", "positive", "-1")
        self.expect_error(with_key("config_runtime", np.array([5, np.nan, 7])),
                          "config_runtime", "finite")
        feat = tiny_layout()["node_feat"]
        feat[0, 17] = np.inf
        self.expect_error(with_key("node_feat", feat), "node_feat", "finite", "index 17")
        self.expect_error(with_key("node_opcode", np.array([63, 63, 34, 2, 200], np.int32)),
                          "node_opcode", "[0, 120]", "200")
        self.expect_error(with_key("config_feat", np.zeros((3, 24), np.float32)), "both layout keys")

    def test_truncated_and_junk_files_raise_never_crash(self):
        tcost.save(self.path("ok.npz"), tiny_layout())
        with open(self.path("ok.npz"), "rb") as f:
            data = f.read()
        for n in range(0, len(data), 7):
            with open(self.path("cut.npz"), "wb") as f:
                f.write(data[:n])
            with self.assertRaises(tcost.Error):
                tcost.load(self.path("cut.npz"))
        with self.assertRaisesRegex(tcost.Error, "absent.npz.*cannot open"):
            tcost.load(self.path("absent.npz"))

    def test_bad_arrays_are_errors(self):
        with self.assertRaisesRegex(tcost.Error, "not one the TpuGraphs schema uses"):
            tcost.save(self.path("x.npz"), {"a": np.zeros(3, np.complex64)})
        with self.assertRaisesRegex(tcost.Error, "dtype object"):
            tcost.save(self.path("x.npz"), {"a": object()})
        self.assertFalse(os.path.exists(self.path("x.npz")))


class Metrics(unittest.TestCase):
    def test_against_the_definitions(self):
        rng = random.Random(5)
        for n in (2, 3, 7, 40):
            for _ in range(20):
                truth = [rng.randint(1, 6) for _ in range(n)]  # ties on purpose
                pred = [rng.randint(1, 6) for _ in range(n)]
                want = tau_reference(pred, truth)
                got = tcost.kendall_tau(np.array(pred, float), truth)
                if math.isnan(want):
                    self.assertTrue(math.isnan(got))
                else:
                    self.assertAlmostEqual(got, want, places=12)
                if len(set(truth)) > 1:
                    self.assertAlmostEqual(tcost.opa(pred, truth), opa_reference(pred, truth), places=12)
                for k in (1, 3):
                    self.assertAlmostEqual(tcost.slowdown(pred, truth, k),
                                           slowdown_reference(pred, truth, k), places=12)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(tcost.Error, "differ in length"):
            tcost.kendall_tau([1, 2, 3], [1, 2])
        with self.assertRaises(tcost.Error):
            tcost.slowdown([1, 2], [1, 2], 0)
        with self.assertRaises(tcost.Error):
            tcost.opa([[1, 2]], [[1, 2]])


class Models(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = tcost.Model(MODEL, threads=1)

    def test_rank_matches_the_cli(self):
        out = subprocess.run([BIN, "rank", "--model", MODEL, "--graph", GRAPH],
                             check=True, capture_output=True, text=True).stdout
        cli = [int(v) for v in out.split(":", 1)[1].split()]
        g = tcost.load(GRAPH)
        self.assertEqual(list(self.model.rank(g)), cli)
        self.assertEqual((self.model.name, self.model.collection), ("tgraph", "layout"))
        cost = self.model.predict(g)
        self.assertEqual(cost.shape, g["config_runtime"].shape)
        self.assertGreater(tcost.kendall_tau(cost, g["config_runtime"]), 0.0)

    def test_a_bad_graph_or_checkpoint_is_an_error(self):
        g = tcost.load(GRAPH)
        del g["node_opcode"]
        with self.assertRaisesRegex(tcost.Error, "<graph dict>: missing key 'node_opcode'"):
            self.model.predict(g)
        with self.assertRaises(tcost.Error):
            self.model.predict(tiny_layout())  # 18-wide configurations: not this model's
        with tempfile.NamedTemporaryFile(suffix=".pt") as f:
            f.write(b"not a checkpoint")
            f.flush()
            with self.assertRaises(tcost.Error):
                tcost.Model(f.name)

    def test_threads_predict_at_once(self):
        # The GIL is released in predict: two threads score concurrently and agree.
        g = tcost.load(GRAPH)
        want = self.model.predict(g)
        got = [None, None]

        def run(i):
            got[i] = tcost.Model(MODEL, threads=1).predict(g)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for c in got:
            np.testing.assert_allclose(c, want, rtol=1e-6)

    def test_an_ensemble_standardises_and_averages(self):
        g = tcost.load(GRAPH)
        trees = tcost.load(GRAPH.replace(os.sep + "layout" + os.sep, os.sep + "ast" + os.sep))
        with tempfile.TemporaryDirectory() as d:
            ens = os.path.join(d, "two.ens")
            subprocess.run([BIN, "ensemble", "--out", ens, "--member", os.path.abspath(MODEL),
                            "--member", os.path.abspath(MODEL), "--weight", "1", "--weight", "3"],
                           check=True, capture_output=True)
            m = tcost.Model(ens, threads=1)
            self.assertEqual((m.name, m.collections), ("ensemble", ["layout"]))
            c = self.model.predict(g)
            want = (c - c.mean()) / c.std()
            np.testing.assert_allclose(m.predict(g), want, rtol=1e-6, atol=1e-9)
            # Given the syntax trees too, a layout-only ensemble reads the graph alone; its
            # ranking with them is `tcost rank --ast`'s.
            np.testing.assert_allclose(m.predict(g, ast=trees), want, rtol=1e-6, atol=1e-9)
            tree_file = GRAPH.replace(os.sep + "layout" + os.sep, os.sep + "ast" + os.sep)
            out = subprocess.run([BIN, "rank", "--model", ens, "--graph", GRAPH, "--ast",
                                  tree_file], check=True, capture_output=True, text=True).stdout
            self.assertEqual(list(m.rank(g, ast=trees)),
                             [int(v) for v in out.split(":", 1)[1].split()])
            with open(os.path.join(d, "bad.ens"), "w") as f:
                f.write('{"format": "tcost-ensemble", "members": [{"checkpoint": "absent.pt"}]}')
            with self.assertRaisesRegex(tcost.Error, "absent.pt"):
                tcost.Model(os.path.join(d, "bad.ens"))

    def test_refit_learns_the_program_and_saves(self):
        # Refit in memory on one measured program, the model ranks it better; saved, it loads
        # back with the same predictions; the loaded checkpoint itself is untouched.
        g = tcost.load(GRAPH)
        m = tcost.Model(MODEL, threads=1)
        before = tcost.kendall_tau(m.predict(g), g["config_runtime"])
        m.refit(g, steps=60, lr=1e-3, seed=0)
        after = m.predict(g)
        self.assertGreater(tcost.kendall_tau(after, g["config_runtime"]), before + 0.05)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "refit.pt")
            m.save(path)
            np.testing.assert_allclose(tcost.Model(path, threads=1).predict(g), after,
                                       rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(tcost.Model(MODEL, threads=1).predict(g),
                                      self.model.predict(g))
        # A layout model is refused syntax trees alone.
        trees = tcost.load(GRAPH.replace(os.sep + "layout" + os.sep, os.sep + "ast" + os.sep))
        with self.assertRaises(tcost.Error):
            m.refit(trees)
        with self.assertRaisesRegex(tcost.Error, "holds syntax trees"):
            m.predict(trees, ast=trees)
        # Trees beside a graph must be its configurations: another program's are refused.
        other = sorted(f for f in os.listdir(TEST_DIR) if f != os.path.basename(GRAPH))[0]
        wrong = tcost.load(os.path.join(TEST_DIR, other).replace(os.sep + "layout" + os.sep,
                                                                 os.sep + "ast" + os.sep))
        with self.assertRaisesRegex(tcost.Error, "not the same configurations"):
            m.predict(g, ast=wrong)

    def test_score_matches_the_cli(self):
        with tempfile.TemporaryDirectory() as d:
            pred = os.path.join(d, "pred.csv")
            with open(pred, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["ID", "TopConfigs"])
                for name in sorted(os.listdir(TEST_DIR))[:4]:
                    g = tcost.load(os.path.join(TEST_DIR, name))
                    w.writerow([name[:-4], ";".join(map(str, self.model.rank(g)))])
                    os.symlink(os.path.join(os.path.abspath(TEST_DIR), name), os.path.join(d, name))
            got = tcost.score(d, pred)
            cli = json.loads(subprocess.run([BIN, "score", "--data", d, "--pred", pred, "--json"],
                                            check=True, capture_output=True, text=True).stdout)
            self.assertEqual(got["layout_graphs"], 4)
            self.assertAlmostEqual(got["mean_kendall_tau"], cli["mean_kendall_tau"], places=9)
            self.assertEqual(len(got["graphs"]), 4)
            with self.assertRaises(tcost.Error):
                tcost.score(d, os.path.join(d, "absent.csv"))


if __name__ == "__main__":
    unittest.main()
