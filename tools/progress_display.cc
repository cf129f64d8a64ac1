#include "tools/progress_display.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace disco {

namespace {

// Carriage return, then erase to the end of the line (ANSI/VT100).
const char *kClearLine = "\r\033[K";

ProgressDisplay::Write stdio_writer(std::FILE *f) {
  return [f](const std::string &s) {
    std::fwrite(s.data(), 1, s.size(), f);
    std::fflush(f);
  };
}

ProgressDisplay::Clock steady_clock_from_now() {
  const auto start = std::chrono::steady_clock::now();
  return [start] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
}

}  // namespace

ProgressDisplay::ProgressDisplay(bool is_tty, Write to_stderr, Write to_stdout, Clock clock)
    : tty_(is_tty), err_(std::move(to_stderr)), out_(std::move(to_stdout)), clock_(std::move(clock)) {}

ProgressDisplay::ProgressDisplay()
    : ProgressDisplay(isatty(fileno(stderr)) != 0, stdio_writer(stderr), stdio_writer(stdout), steady_clock_from_now()) {
  if (!tty_) return;
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; }))
      if (shown_ && done_ < total_) draw();
  });
}

ProgressDisplay::~ProgressDisplay() {
  if (ticker_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    stop_cv_.notify_one();
    ticker_.join();
  }
  finish();
}

std::string ProgressDisplay::bar_text(size_t done, size_t total, double seconds, int width) {
  done = std::min(done, total);
  const size_t filled = total == 0 ? 0 : done * static_cast<size_t>(width) / total;
  std::string bar(filled, '=');
  if (filled < static_cast<size_t>(width)) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", seconds);
  return "kernel " + std::to_string(done) + " of " + std::to_string(total) + " [" + bar + "] " + secs;
}

void ProgressDisplay::draw() {
  err_(kClearLine + bar_text(done_, total_, clock_()));
  shown_ = true;
}

void ProgressDisplay::kernel_done(size_t done, size_t total) {
  if (!tty_) return;
  std::lock_guard<std::mutex> lock(mu_);
  done_ = done;
  total_ = total;
  if (done >= total) {
    finish_locked();
    return;
  }
  draw();
}

void ProgressDisplay::line(const std::string &text) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool redraw = shown_;
  finish_locked();
  out_(text + "\n");
  if (redraw) draw();
}

void ProgressDisplay::tick() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shown_ && done_ < total_) draw();
}

void ProgressDisplay::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  finish_locked();
}

void ProgressDisplay::finish_locked() {
  if (!shown_) return;
  err_(kClearLine);
  shown_ = false;
}

}  // namespace disco
