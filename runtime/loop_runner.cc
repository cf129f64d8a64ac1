#include "runtime/loop_runner.h"

#include <cstring>
#include <limits>

#include "frontend/errors.h"
#include "runtime/executor.h"

namespace disco {

namespace {

int64_t attr(const PlanStep &step, const char *name) {
  auto it = step.host_attrs.find(name);
  DISCO_CHECK(it != step.host_attrs.end(), "step ", step.label, " (Loop) has no '", name, "' attribute");
  return it->second;
}

bool truth(const TensorData &t, const std::string &where, const char *what) {
  DISCO_CHECK(t.num_elements() == 1, where, ": ", what, " must hold one element, it holds ", t.num_elements());
  return t.int_at(0) != 0;
}

// `parts`, each of one shape, stacked along a new first axis.
TensorData stack(const std::vector<TensorData> &parts) {
  std::vector<int64_t> shape = parts.at(0).shape;
  shape.insert(shape.begin(), static_cast<int64_t>(parts.size()));
  TensorData out(parts[0].dtype, shape);
  uint8_t *dst = out.mutable_data();
  for (const TensorData &p : parts) {
    if (p.num_bytes() > 0) std::memcpy(dst, p.data(), p.num_bytes());  // an empty part may have no storage
    dst += p.num_bytes();
  }
  return out;
}

// "host: Loop_3" -> "node 'Loop_3' (Loop)", as compile errors name it.
std::string where_of(const PlanStep &step) {
  const size_t colon = step.label.find(": ");
  return "node '" + (colon == std::string::npos ? step.label : step.label.substr(colon + 2)) + "' (Loop)";
}

}  // namespace

LoopRunner::LoopRunner(const PlanStep &step, const std::string &dir)
    : where_(where_of(step)), carried_(static_cast<size_t>(attr(step, "carried"))) {
  const std::string path = dir + "/loop" + std::to_string(attr(step, "body_plan")) + ".plan.txt";
  // In this process: a plan that needs a child process runs whole in one (runtime/child_executor.h).
  body_ = std::make_unique<Executor>(Plan::load(path), dir, /*allow_child=*/false);
  const Plan &p = body_->plan();
  DISCO_CHECK(p.inputs.size() >= 2 + carried_ && p.output_names.size() >= 1 + carried_, where_,
              ": the body's plan '", path, "' does not fit the loop");
}

LoopRunner::~LoopRunner() = default;

void LoopRunner::set_num_threads(int n) { body_->set_num_threads(n); }

std::vector<TensorData> LoopRunner::run(const std::vector<const TensorData *> &in,
                                        const std::function<std::vector<int64_t>(size_t)> &empty_scan) {
  const Plan &p = body_->plan();
  DISCO_CHECK(in.size() == p.inputs.size(), where_, ": ", in.size(), " inputs for a body of ", p.inputs.size());
  int64_t trips = std::numeric_limits<int64_t>::max();
  if (in[0]) {
    DISCO_CHECK(in[0]->num_elements() == 1, where_, ": the trip count must hold one element");
    trips = in[0]->int_at(0);
  }
  bool cond = in[1] ? truth(*in[1], where_, "the condition") : true;
  std::vector<TensorData> body_in(p.inputs.size());
  for (size_t k = 2; k < in.size(); ++k) {
    DISCO_CHECK(in[k], where_, ": input ", k, " is missing");
    body_in[k] = *in[k];  // carried values change each trip; outer values stay
  }
  const size_t scans = p.output_names.size() - 1 - carried_;
  std::vector<std::vector<TensorData>> parts(scans);
  for (int64_t i = 0; cond && i < trips; ++i) {
    body_in[0] = TensorData::from_int64({i}, std::vector<int64_t>(p.inputs[0].shape.size(), 1));
    body_in[1] = TensorData(DType::Bool, std::vector<int64_t>(p.inputs[1].shape.size(), 1));
    body_in[1].mutable_as<uint8_t>()[0] = 1;
    std::vector<TensorData> outs;  // fresh each trip: the parts and carried values keep theirs
    try {
      outs = body_->run(body_in);
    } catch (const Error &e) {
      fail(where_, " iteration ", i, ": ", e.what());
    }
    cond = truth(outs[0], where_, "the body's condition output");
    for (size_t k = 0; k < carried_; ++k) body_in[2 + k] = outs[1 + k];
    for (size_t k = 0; k < scans; ++k) {
      const TensorData &t = outs[1 + carried_ + k];
      if (!parts[k].empty() && parts[k][0].shape != t.shape)
        fail(where_, ": scan output ", k, " has the shape ", shape_str(Shape(t.shape.begin(), t.shape.end())),
             " at iteration ", i, " and ",
             shape_str(Shape(parts[k][0].shape.begin(), parts[k][0].shape.end())),
             " at iteration 0; the iterations must agree to be stacked");
      parts[k].push_back(t);
    }
  }
  std::vector<TensorData> result;
  for (size_t k = 0; k < carried_; ++k) result.push_back(std::move(body_in[2 + k]));
  for (size_t k = 0; k < scans; ++k) {
    if (!parts[k].empty()) {
      result.push_back(stack(parts[k]));
      continue;
    }
    const PlanBuffer &b = p.buffers.at(static_cast<size_t>(p.output_buffers.at(1 + carried_ + k)));
    std::vector<int64_t> shape = empty_scan(k);
    DISCO_CHECK(!shape.empty(), where_, ": scan output ", k, " has no first axis");
    shape[0] = 0;
    result.push_back(TensorData(b.dtype, shape));
  }
  return result;
}

}  // namespace disco
