// OUT/manifest.json of a collection: the machine (CPU, cores, memory, SIMD flags, caches,
// kernel), the Halide package and target, the protocol, the date, counts per split, failures
// by kind and the noise ceiling (docs/collect.md). A rewrite (--rewrite) keeps the machine,
// target and protocol the records were measured under.
#pragma once

#include "halide/collect.h"
#include "halide/measure.h"
#include "halide/result_log.h"

namespace tcost::halide {

// The CPU model of this machine (/proc/cpuinfo's first "model name"; "" when unknown). Every
// measurement record carries it: the project's machines of one kind are not all one CPU, and
// Halide's target string does not tell them apart.
const std::string& cpu_model();
// This boot of the machine (/proc/sys/kernel/random/boot_id; "" when unknown). Every measurement
// record carries it as "boot": two sessions of one CPU type on two boots (or hosts) disagree
// more than two sessions of one boot (docs/collect.md, "Sizing a new collection across
// sessions"), and the records are how a study tells them apart.
const std::string& boot_id();
// The CPU a collection's measurements are taken on, which its datasets take runtimes from: the
// one its manifest names (OUT/manifest.json's machine.cpu), or this machine's for a collection
// without one (a new collection, or a manifest from before CPUs were recorded).
std::string data_cpu(const std::string& out);
// The statistic a collection's datasets read off its measurements (collect --statistic): the
// one its manifest names (protocol.statistic), or best-run for a collection without one.
// InputError when the manifest names one this build does not know.
RunStatistic data_statistic(const std::string& out);
// The later sessions a collection's datasets pool (collect --pool-sessions): its manifest's
// protocol.pooled_sessions, none when absent. InputError when that is not a list of strings.
std::vector<std::string> data_pooled_sessions(const std::string& out);

// `statistic`: what the datasets were written with (protocol.statistic, whatever else a rewrite
// or a later run keeps of the manifest before).
void write_manifest(const CollectOptions& options, const MeasureOptions& measure,
                    const ResultLog& log, const CollectSummary& summary, RunStatistic statistic);

}  // namespace tcost::halide
