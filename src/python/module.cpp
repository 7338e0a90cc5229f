// The Python face of tcost (docs/python.md): a pybind11 module over the core readers, the
// metrics and the in-memory cost model. Nothing here re-implements them: a dict of numpy arrays
// goes through the same validation as a file (NpzFile over arrays in memory), and every tcost
// error becomes tcost.Error, a ValueError, with the C++ message. Long calls release the GIL.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/npz.h"
#include "core/submission.h"
#include "core/tpugraphs_io.h"
#include "train/cost_model.h"

namespace py = pybind11;

namespace tcost::python {
namespace {

using Arrays = std::vector<std::pair<std::string, NpyArray>>;

DType dtype_from_numpy(const py::dtype& d, const std::string& key) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (d.attr("byteorder").cast<std::string>() == ">")
    throw InputError("array '" + key + "': big-endian arrays are not supported");
  if (kind == 'b' && size == 1) return DType::kBool;
  if (kind == 'f' && size == 4) return DType::kFloat32;
  if (kind == 'f' && size == 8) return DType::kFloat64;
  if (kind == 'i' || kind == 'u') {
    const bool u = kind == 'u';
    switch (size) {
      case 1:
        return u ? DType::kUInt8 : DType::kInt8;
      case 2:
        return u ? DType::kUInt16 : DType::kInt16;
      case 4:
        return u ? DType::kUInt32 : DType::kInt32;
      case 8:
        return u ? DType::kUInt64 : DType::kInt64;
      default:
        break;
    }
  }
  throw InputError("array '" + key + "': dtype " + d.attr("name").cast<std::string>() +
                   " is not one the TpuGraphs schema uses (bool, ints, float32/64)");
}

NpyArray to_npy(const py::handle& obj, const std::string& key) {
  const auto a = py::array::ensure(obj, py::array::c_style);
  if (!a) throw InputError("'" + key + "' is not an array");
  NpyArray out;
  out.dtype = dtype_from_numpy(a.dtype(), key);
  out.shape.assign(a.shape(), a.shape() + a.ndim());
  out.data.resize(static_cast<size_t>(a.nbytes()));
  if (a.nbytes() > 0) std::memcpy(out.data.data(), a.data(), out.data.size());
  return out;
}

py::array to_numpy(const NpyArray& a) {
  py::array out(py::dtype(std::string(dtype_descr(a.dtype))), a.shape);
  if (!a.data.empty()) std::memcpy(out.mutable_data(), a.data.data(), a.data.size());
  return out;
}

Arrays arrays_of(const py::dict& d) {
  Arrays out;
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k).cast<std::string>();
    out.emplace_back(key, to_npy(v, key));
  }
  return out;
}

// A file's arrays after the C++ reader accepted them (it reads every key it knows).
py::dict load(const std::string& path) {
  Arrays arrays;
  {
    py::gil_scoped_release release;
    const NpzFile npz(path);
    if (npz.has("ast_node_kind")) {
      read_ast(npz);
    } else {
      read_graph(npz);
    }
    for (const auto& key : npz.keys()) arrays.emplace_back(key, npz.get(key));
  }
  py::dict out;
  for (const auto& [key, a] : arrays) out[py::str(key)] = to_numpy(a);
  return out;
}

void save(const std::string& path, const py::dict& arrays, bool compress) {
  Arrays a = arrays_of(arrays);
  py::gil_scoped_release release;
  write_npz(path, a, compress);
}

std::vector<double> doubles(const py::handle& obj, const char* what) {
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(obj);
  if (!a || a.ndim() != 1)
    throw InputError(std::string(what) + ": expected a 1-d array of numbers");
  return std::vector<double>(a.data(), a.data() + a.size());
}

void same_length(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) {
    throw InputError("pred and truth differ in length: " + std::to_string(a.size()) + " and " +
                     std::to_string(b.size()));
  }
}

double tau(const py::handle& pred, const py::handle& truth) {
  const auto p = doubles(pred, "pred"), t = doubles(truth, "truth");
  same_length(p, t);
  py::gil_scoped_release release;
  return kendall_tau_b(p, t);
}

double opa(const py::handle& pred, const py::handle& truth) {
  const auto p = doubles(pred, "pred"), t = doubles(truth, "truth");
  same_length(p, t);
  py::gil_scoped_release release;
  return ordered_pair_accuracy(p, t);
}

double slowdown(const py::handle& pred, const py::handle& truth, int64_t k) {
  const auto p = doubles(pred, "pred"), t = doubles(truth, "truth");
  same_length(p, t);
  if (k < 1) throw UsageError("k must be at least 1");
  py::gil_scoped_release release;
  return slowdown_at_k(p, t, k);
}

// The views of one program held by a graph dict (a layout/tile graph, or syntax trees when it
// holds ast_node_kind) and an optional syntax-tree dict beside it.
class Views {
 public:
  Views(const py::dict& graph, const py::object& ast) {
    const NpzFile npz("<graph dict>", arrays_of(graph));
    if (npz.has("ast_node_kind")) {
      if (!ast.is_none())
        throw UsageError("graph holds syntax trees: pass them alone, or as ast= beside a graph");
      ast_ = read_ast(npz);
    } else {
      graph_ = read_graph(npz);
      if (!ast.is_none()) ast_ = read_ast(NpzFile("<ast dict>", arrays_of(ast.cast<py::dict>())));
    }
    // The trees beside a graph hold its configurations, in its order (as files are checked).
    if (graph_ && ast_) check_trees_of(*graph_, *ast_, "graph", "ast=");
  }
  train::Views views() const { return {graph_ ? &*graph_ : nullptr, ast_ ? &*ast_ : nullptr}; }

 private:
  std::optional<Graph> graph_;
  std::optional<AstSet> ast_;
};

// A checkpoint loaded once; graphs are dicts in the schema of the files it was trained on.
class Model {
 public:
  explicit Model(const std::string& checkpoint, int threads) {
    py::gil_scoped_release release;
    model_ = train::load_cost_model(checkpoint, threads);
  }
  std::string name() const { return model_->name(); }
  std::string collection() const { return collection_name(model_->collection()); }
  std::vector<std::string> collections() const {
    std::vector<std::string> out;
    for (Collection c : model_->collections()) out.emplace_back(collection_name(c));
    return out;
  }

  // `ast`: the same configurations' syntax trees, for a model that reads both views.
  py::array_t<double> predict(const py::dict& graph, const py::object& ast) {
    const Views v(graph, ast);
    std::vector<double> cost;
    {
      py::gil_scoped_release release;
      cost = model_->score(v.views());
    }
    py::array_t<double> out(static_cast<py::ssize_t>(cost.size()));
    std::copy(cost.begin(), cost.end(), out.mutable_data());
    return out;
  }

  // Fine-tunes in memory on one measured program (its runtimes in the dicts), as tuning does.
  void refit(const py::dict& graph, const py::object& ast, int steps, double lr,
             int configs_per_step, uint64_t seed) {
    const Views v(graph, ast);
    train::RefitOptions o;
    o.steps = steps;
    o.lr = lr;
    o.configs_per_step = configs_per_step;
    o.seed = seed;
    py::gil_scoped_release release;
    model_->refit({v.views()}, o);
  }

  void save(const std::string& path) const {
    py::gil_scoped_release release;
    model_->save(path);
  }

  // Configuration indices, predicted fastest first (ties keep index order, as `tcost rank`);
  // ast as predict's.
  py::array_t<int64_t> rank(const py::dict& graph, const py::object& ast) {
    const auto cost = predict(graph, ast);
    const double* c = cost.data();
    std::vector<int64_t> order(static_cast<size_t>(cost.size()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return c[a] < c[b]; });
    py::array_t<int64_t> out(static_cast<py::ssize_t>(order.size()));
    std::copy(order.begin(), order.end(), out.mutable_data());
    return out;
  }

 private:
  std::unique_ptr<train::CostModel> model_;
};

py::dict score(const std::string& data, const std::string& pred_csv) {
  ScoreReport r;
  {
    py::gil_scoped_release release;
    const auto files = list_npz_files(data);
    if (files.empty()) throw InputError(data + ": no .npz files");
    r = score_submission(files, read_submission(pred_csv), pred_csv);
  }
  py::list graphs;
  for (const auto& g : r.per_graph) {
    py::dict d;
    d["id"] = g.id;
    d["collection"] = collection_name(g.collection);
    d["configs"] = g.configs;
    d["listed"] = g.listed;
    if (g.collection == Collection::kTile) {
      d["slowdown_1"] = g.slowdown_1;
      d["slowdown_5"] = g.slowdown_5;
      d["slowdown_10"] = g.slowdown_10;
    } else {
      d["kendall_tau"] = g.kendall_tau;
      d["opa"] = g.opa;
    }
    graphs.append(d);
  }
  py::dict out;
  out["graphs"] = graphs;
  out["layout_graphs"] = r.layout_graphs;
  out["tile_graphs"] = r.tile_graphs;
  out["mean_kendall_tau"] = r.mean_kendall_tau;
  out["mean_opa"] = r.mean_opa;
  out["mean_slowdown_1"] = r.mean_slowdown_1;
  out["mean_slowdown_5"] = r.mean_slowdown_5;
  out["mean_slowdown_10"] = r.mean_slowdown_10;
  return out;
}

}  // namespace
}  // namespace tcost::python

PYBIND11_MODULE(tcost, m) {
  using namespace tcost::python;
  m.doc() =
      "tcost: TpuGraphs and syntax-tree files, ranking metrics and cost models (docs/python.md)";
  static py::exception<std::exception> error(m, "Error", PyExc_ValueError);
  // Every error of tcost's (bad input, bad arguments, internal) raises tcost.Error with the C++
  // message; nothing reaches the interpreter as a crash.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  m.def("load", &load, py::arg("path"),
        "Arrays of a TpuGraphs (layout/tile) or syntax-tree .npz, validated as tcost reads them");
  m.def("save", &save, py::arg("path"), py::arg("arrays"), py::arg("compress") = true,
        "Writes a dict of arrays as an .npz (atomically: a temporary file renamed into place)");
  m.def("kendall_tau", &tau, py::arg("pred"), py::arg("truth"), "Kendall's tau-b");
  m.def("opa", &opa, py::arg("pred"), py::arg("truth"), "Ordered pair accuracy");
  m.def("slowdown", &slowdown, py::arg("pred"), py::arg("truth"), py::arg("k"),
        "Best runtime among the k predicted fastest over the best runtime, minus 1");
  m.def("score", &score, py::arg("data"), py::arg("pred_csv"),
        "Scores a competition CSV against the .npz files under data, as `tcost score`");
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string&, int>(), py::arg("checkpoint"), py::arg("threads") = 0)
      .def_property_readonly("name", &Model::name)
      .def_property_readonly("collection", &Model::collection)
      .def_property_readonly("collections", &Model::collections)
      .def("predict", &Model::predict, py::arg("graph"), py::arg("ast") = py::none(),
           "Predicted cost per configuration (higher = slower); ast: the same configurations' "
           "syntax trees, for an ensemble of graph and syntax-tree models")
      .def("rank", &Model::rank, py::arg("graph"), py::arg("ast") = py::none(),
           "Configuration indices, predicted fastest first; ast as predict's")
      .def("refit", &Model::refit, py::arg("graph"), py::arg("ast") = py::none(),
           py::arg("steps") = 30, py::arg("lr") = 3e-4, py::arg("configs_per_step") = 32,
           py::arg("seed") = 0,
           "Fine-tunes in memory on one measured program (the dicts' runtimes), as tuning does "
           "(AdamW with the model's loss; XGBoost: boosting rounds)")
      .def("save", &Model::save, py::arg("path"),
           "Writes the model as it is now (after refits) as a checkpoint Model() reads back");
}
