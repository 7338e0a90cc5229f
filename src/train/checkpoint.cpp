#include "train/checkpoint.h"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace tcost::train {
namespace {

constexpr const char* kFormatName = "tcost-checkpoint";

template <typename F>
auto torch_guard(const std::string& path, const char* what, F&& f) {
  try {
    return f();
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    if (msg.size() > 200) msg = msg.substr(0, 200) + "...";
    throw InputError(fmt::format("{}: {}: {}", path, what, msg));
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointMeta& meta,
                     const model::Normalizer& norm, const std::shared_ptr<model::Network>& model,
                     const std::vector<uint8_t>& xgb_model, torch::optim::Optimizer* optimizer) {
  torch::serialize::OutputArchive archive;
  const nlohmann::json j = {{"format", kFormatName},
                            {"format_version", kCheckpointFormatVersion},
                            {"feature_schema", model::kFeatureSchemaVersion},
                            {"model", nlohmann::json::parse(meta.model.to_json())},
                            {"epoch", meta.epoch},
                            {"step", meta.step},
                            {"valid_tau", meta.valid_tau},
                            {"best_valid_tau", meta.best_valid_tau},
                            {"epochs_since_best", meta.epochs_since_best},
                            {"loss", meta.loss},
                            {"averaged_epochs", meta.averaged_epochs}};
  archive.write("meta", c10::IValue(j.dump()));
  torch::serialize::OutputArchive norm_archive;
  norm.save(norm_archive);
  archive.write("normalizer", norm_archive);
  if (model) {
    torch::serialize::OutputArchive model_archive;
    model->save(model_archive);
    archive.write("model", model_archive);
  }
  if (!xgb_model.empty()) {
    archive.write("xgb", torch::from_blob(const_cast<uint8_t*>(xgb_model.data()),
                                          {static_cast<int64_t>(xgb_model.size())}, torch::kUInt8)
                             .clone());
  }
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive opt_archive;
    optimizer->save(opt_archive);
    archive.write("optimizer", opt_archive);
  }
  const std::string tmp = path + ".tmp";
  torch_guard(path, "cannot write checkpoint", [&] {
    archive.save_to(tmp);
    return 0;
  });
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot write checkpoint: {}", path, ec.message()));
}

Checkpoint load_checkpoint(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw InputError(fmt::format("{}: no such checkpoint file", path));
  }
  torch::serialize::InputArchive archive;
  torch_guard(path, "not a tcost checkpoint (corrupt or another format)", [&] {
    archive.load_from(path);
    return 0;
  });
  c10::IValue meta_value;
  if (!archive.try_read("meta", meta_value) || !meta_value.isString()) {
    throw InputError(fmt::format("{}: not a tcost checkpoint (no metadata)", path));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(meta_value.toStringRef());
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: checkpoint metadata is corrupt: {}", path, e.what()));
  }
  if (j.value("format", "") != kFormatName) {
    throw InputError(
        fmt::format("{}: not a tcost checkpoint (format '{}')", path, j.value("format", "")));
  }
  if (j.value("format_version", -1) != kCheckpointFormatVersion) {
    throw InputError(fmt::format("{}: checkpoint format version {}, this tcost reads version {}",
                                 path, j.value("format_version", -1), kCheckpointFormatVersion));
  }
  if (j.value("feature_schema", -1) != model::kFeatureSchemaVersion) {
    throw InputError(
        fmt::format("{}: checkpoint uses feature schema {}, this tcost computes "
                    "schema {}; retrain the model",
                    path, j.value("feature_schema", -1), model::kFeatureSchemaVersion));
  }
  Checkpoint ck;
  try {
    ck.meta.model = model::ModelOptions::from_json(j.at("model").dump());
    ck.meta.epoch = j.at("epoch").get<int>();
    ck.meta.step = j.at("step").get<int64_t>();
    ck.meta.valid_tau = j.at("valid_tau").is_null() ? 0.0 : j.at("valid_tau").get<double>();
    ck.meta.best_valid_tau =
        j.at("best_valid_tau").is_null() ? -2.0 : j.at("best_valid_tau").get<double>();
    ck.meta.epochs_since_best = j.at("epochs_since_best").get<int>();
    ck.meta.loss = j.at("loss").get<std::string>();
    ck.meta.averaged_epochs = j.value("averaged_epochs", 0);  // absent before 2026-12-07
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: checkpoint metadata is incomplete: {}", path, e.what()));
  }
  torch_guard(path, "checkpoint normaliser is corrupt", [&] {
    torch::serialize::InputArchive a;
    archive.read("normalizer", a);
    ck.normalizer = model::Normalizer::load(a);
    return 0;
  });
  if (ck.meta.model.name == "xgb") {
    torch_guard(path, "checkpoint XGBoost model is missing", [&] {
      torch::Tensor t;
      archive.read("xgb", t);
      ck.xgb_model.assign(t.data_ptr<uint8_t>(), t.data_ptr<uint8_t>() + t.numel());
      return 0;
    });
    return ck;
  }
  ck.model = model::make_model(ck.meta.model, model::dims_of(ck.normalizer), ck.normalizer);
  torch_guard(path, "checkpoint weights do not fit the model", [&] {
    torch::serialize::InputArchive a;
    archive.read("model", a);
    ck.model->load(a);
    return 0;
  });
  return ck;
}

void load_optimizer_state(const std::string& path, torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive archive;
  torch_guard(path, "cannot read resume state", [&] {
    archive.load_from(path);
    torch::serialize::InputArchive a;
    archive.read("optimizer", a);
    optimizer.load(a);
    return 0;
  });
}

}  // namespace tcost::train
