#include "targets/plan_builder.h"

#include <algorithm>
#include <chrono>
#include <fstream>

#include "frontend/errors.h"
#include "frontend/identifier.h"

namespace disco {


PlanBuilder::PlanBuilder(const Graph &g, const ShapeStore &store, std::string name, std::string dir,
                         std::string target, std::function<void(const std::string &)> progress)
    : g_(g), store_(store), dir_(std::move(dir)), target_(std::move(target)), progress_(std::move(progress)) {
  plan_.name = std::move(name);
  plan_.checks = store.checks();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value &v = g.value(g.inputs[i]);
    plan_.inputs.push_back({v.name, v.dtype, *v.shape});
    plan_.buffers.push_back({PlanBuffer::Input, v.name, v.dtype, *v.shape, static_cast<int>(i)});
    buffer_of_[g.inputs[i]] = static_cast<int>(plan_.buffers.size()) - 1;
    plan_.input_buffers.push_back(buffer_of_[g.inputs[i]]);
  }
  plan_.output_buffers.assign(g.outputs.size(), -1);
  for (int o : g.outputs) plan_.output_names.push_back(g.value(o).name);
}

Graph &PlanBuilder::scratch_graph() {
  if (!scratch_ || scratch_->values.size() != g_.values.size()) scratch_ = g_;
  return *scratch_;
}

void PlanBuilder::progress(const std::string &line) const {
  if (progress_) progress_(line);
}

int PlanBuilder::input_buffer(int vid) {
  if (auto it = buffer_of_.find(vid); it != buffer_of_.end()) return it->second;
  const Value &v = g_.value(vid);
  DISCO_CHECK(v.constant, "internal: a step reads '", v.name, "' before any step writes it");
  const TensorData &t = *v.constant;
  while (constants_.size() % 64) constants_.push_back('\0');  // aligned for vector loads
  PlanBuffer b{PlanBuffer::Constant, v.name, t.dtype, {}, -1, static_cast<int64_t>(constants_.size())};
  for (int64_t d : t.shape) b.shape.push_back(Dim(d));
  constants_.append(reinterpret_cast<const char *>(t.data()), t.num_bytes());
  plan_.buffers.push_back(std::move(b));
  return buffer_of_[vid] = static_cast<int>(plan_.buffers.size()) - 1;
}

int PlanBuilder::output_buffer(int vid, bool rebind) {
  const Value &v = g_.value(vid);
  int slot = -1;
  for (size_t p = 0; p < g_.outputs.size(); ++p)
    if (g_.outputs[p] == vid && plan_.output_buffers[p] < 0) {
      slot = static_cast<int>(p);
      break;
    }
  plan_.buffers.push_back({slot >= 0 ? PlanBuffer::Output : PlanBuffer::Temp, v.name, v.dtype, *v.shape, slot});
  const int b = static_cast<int>(plan_.buffers.size()) - 1;
  if (slot >= 0) plan_.output_buffers[slot] = b;
  if (rebind || !buffer_of_.count(vid)) buffer_of_[vid] = b;
  return b;
}

void PlanBuilder::pad_channels(int buffer, int64_t multiple) {
  PlanBuffer &b = plan_.buffers.at(static_cast<size_t>(buffer));
  DISCO_CHECK(b.kind == PlanBuffer::Temp && multiple > 0 && b.shape.size() >= 2,
              "internal: only a temporary of rank 2 or more can have its channels padded ('", b.name, "')");
  b.channel_multiple = multiple;
}

std::string PlanBuilder::next_kernel_name() { return identifier_from(plan_.name, "m_") + "_k" + std::to_string(kernels_++); }

void PlanBuilder::add_step(PlanStep step) { plan_.steps.push_back(std::move(step)); }

std::optional<std::string> PlanBuilder::kernel_for(const std::string &key) const {
  if (auto it = kernel_of_key_.find(key); it != kernel_of_key_.end()) return it->second;
  return std::nullopt;
}

std::string PlanBuilder::new_kernel_name(const std::string &key) {
  return kernel_store_ ? KernelStore::kernel_name(key) : next_kernel_name();
}

void PlanBuilder::add_kernel(const std::string &key, KernelJob job) {
  kernel_of_key_[key] = job.name;
  ++profile_.unique_kernels;
  objects_.push_back(job.object_path);
  if (kernel_store_ && kernel_store_->fetch(job.name, key, job.object_path)) {
    ++profile_.stored_kernels;
    progress("  " + job.name + " from the kernel cache");
    return;
  }
  jobs_.push_back(std::move(job));
  job_keys_.push_back(key);
}

void PlanBuilder::compile_kernels(int workers) {
  if (jobs_.empty()) return;
  const int n = std::min(compile_workers(workers), static_cast<int>(jobs_.size()));
  progress("compiling " + std::to_string(jobs_.size()) + " Halide kernel" + (jobs_.size() == 1 ? "" : "s") + " on " +
           std::to_string(n) + " worker" + (n == 1 ? "" : "s"));
  const auto t0 = std::chrono::steady_clock::now();
  run_kernel_jobs(jobs_, n, profile_, progress_, kernel_progress_);
  profile_.kernel_compile_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  profile_.compile_workers = n;
  if (kernel_store_)
    for (size_t i = 0; i < jobs_.size(); ++i) kernel_store_->publish(jobs_[i].name, job_keys_[i], jobs_[i].object_path);
  jobs_.clear();
  job_keys_.clear();
}

std::vector<int> PlanBuilder::unwritten_outputs() const {
  std::vector<int> out;
  for (size_t p = 0; p < g_.outputs.size(); ++p)
    if (plan_.output_buffers[p] < 0) out.push_back(g_.outputs[p]);
  return out;
}

Plan PlanBuilder::finish() {
  for (size_t p = 0; p < g_.outputs.size(); ++p)
    DISCO_CHECK(plan_.output_buffers[p] >= 0, "internal: no step writes output '", g_.value(g_.outputs[p]).name, "'");
  if (!constants_.empty()) {
    plan_.constants = "constants.bin";
    std::ofstream f(dir_ + "/" + plan_.constants, std::ios::binary);
    f.write(constants_.data(), static_cast<std::streamsize>(constants_.size()));
    DISCO_CHECK(f.good(), "cannot write '", dir_, "/", plan_.constants, "'");
  }
  return plan_;
}

}  // namespace disco
