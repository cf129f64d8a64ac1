// Activation calibration: the float model runs on sample inputs
// (float_reference.h) and every value's samples are kept, for choose_fix.
//
// The samples are the compile option `calibration_samples` (what `disco run
// --calibrate FILE.npy...` gives): .npy files, each one sample for a
// one-input model, or INPUT=FILE.npy entries. Without any, the default:
// 8 samples of standard normal noise (a fixed seed, so compiles repeat),
// shaped as the inputs declare, with each symbolic dim at its --hint value,
// else 1 for a leading dim and 32 for the others.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "frontend/graph.h"
#include "lowering/shape_store.h"
#include "targets/vitis_ai/float_reference.h"

namespace disco::vitis_ai {

constexpr int kDefaultCalibrationSamples = 8;

struct Calibration {
  std::string source;                         // "8 samples of N(0, 1) noise" or the file names
  std::map<int, std::vector<float>> values;   // value id -> its elements over every sample
  std::map<int, std::vector<int64_t>> shape;  // value id -> its shape in the first sample
};

// One map (graph input id -> tensor) per sample.
std::vector<std::map<int, FloatTensor>> calibration_samples(const Graph &g, const ShapeStore &store,
                                                            const std::vector<std::string> &files, std::string *source);
Calibration calibrate(const Graph &g, const ShapeStore &store, const std::vector<std::string> &files);

}  // namespace disco::vitis_ai
