// The compile progress of the disco CLI.
//
// On a terminal (stderr is a tty), Halide kernel compiles show as one line on
// stderr, redrawn in place as each kernel finishes:
//   kernel 12 of 40 [=========>              ] 3.4 s
// (the elapsed time counts from the display's start, i.e. the compile's). The
// process's display also redraws it four times a second, so the time moves
// while one long kernel compiles.
// The line is erased when the last kernel is done, or when the display is
// destroyed (so an error message starts on a clean line); a plain --verbose
// line is printed above it and the bar drawn again. Not on a terminal, kernel
// events draw nothing and --verbose lines are plain lines, as before.
//
// The library never writes to the terminal itself: it calls the callbacks of
// CompileOptions (progress, kernel_progress), which the CLI points here with
// line_callback() and kernel_callback().
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace disco {

class ProgressDisplay {
 public:
  using Write = std::function<void(const std::string &)>;
  using Clock = std::function<double()>;  // seconds since the display started

  // Tests pass a fake tty flag, writers and clock.
  ProgressDisplay(bool is_tty, Write to_stderr, Write to_stdout, Clock clock);
  // For this process: isatty(stderr), stdio (flushed after each write), a
  // steady clock started now and, on a terminal, a thread calling tick().
  ProgressDisplay();
  ~ProgressDisplay();
  // The callbacks below point at this object.
  ProgressDisplay(const ProgressDisplay &) = delete;
  ProgressDisplay &operator=(const ProgressDisplay &) = delete;

  // `done` of `total` kernels are compiled.
  void kernel_done(size_t done, size_t total);
  // A plain line for stdout (a --verbose progress line).
  void line(const std::string &text);
  // Erases the bar if it is shown.
  void finish();
  // Redraws a shown bar with the time now (the ticker's call; the callbacks
  // may come from another thread, so every call takes the display's lock).
  void tick();

  std::function<void(size_t, size_t)> kernel_callback() {
    return [this](size_t done, size_t total) { kernel_done(done, total); };
  }
  std::function<void(const std::string &)> line_callback() {
    return [this](const std::string &text) { line(text); };
  }

  // The bar's text, without the terminal's control sequences.
  static std::string bar_text(size_t done, size_t total, double seconds, int width = 24);

 private:
  void draw();
  void finish_locked();

  bool tty_;
  Write err_, out_;
  Clock clock_;
  bool shown_ = false;
  size_t done_ = 0, total_ = 0;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace disco
