// The pipeline zoo: real tensor programs written in Halide, each family with several shapes
// from real layers (ResNet-50, MobileNetV2, BERT-base, camera pipelines) scaled to run in
// milliseconds here. The zoo holds only definitions (zoo_families.cpp): every fact tcost uses
// about a program is derived from its IR when it becomes a Program (program.h).
//   zoo_instances    - every program instance, with its family and dataset split.
//   select_instances - the instances whose name or family matches a glob (or any of several,
//                      comma-separated).
//   zoo_program      - the Program of an instance (defines the pipeline, compiles nothing).
#pragma once

#include <string>
#include <vector>

#include "core/dataset.h"
#include "halide/program.h"

namespace tcost::halide {

struct InstanceName {
  std::string name;             // family_shape, e.g. "conv3x3_28x32x32"
  std::string family;           // e.g. "conv3x3"
  Split split = Split::kTrain;  // by family: test programs are never seen in training
};

std::vector<InstanceName> zoo_instances();
std::vector<std::string> zoo_families();
// UsageError when nothing matches.
std::vector<InstanceName> select_instances(const std::string& glob);
// The non-empty items of a comma-separated list, in order ("a,,b" gives a and b).
std::vector<std::string> comma_list(const std::string& text);
// InputError for a name that is not in the zoo.
Program zoo_program(const std::string& instance);

}  // namespace tcost::halide
