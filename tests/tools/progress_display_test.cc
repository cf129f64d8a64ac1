// The CLI's compile progress: on a terminal one bar redrawn in place on
// stderr ("kernel k of N", elapsed time) and erased at the end; not on a
// terminal, nothing for kernels and plain lines for --verbose, as before.
#include "tools/progress_display.h"

#include <gtest/gtest.h>

namespace disco {
namespace {

const std::string kClear = "\r\033[K";

struct Captured {
  std::string err, out;
  double now = 0;
  ProgressDisplay display(bool tty) {
    return ProgressDisplay(
        tty, [this](const std::string &s) { err += s; }, [this](const std::string &s) { out += s; },
        [this] { return now; });
  }
};

TEST(ProgressDisplay, BarShowsKernelCountFilledShareAndElapsedTime) {
  EXPECT_EQ(ProgressDisplay::bar_text(0, 4, 0, 8), "kernel 0 of 4 [>       ] 0.0 s");
  EXPECT_EQ(ProgressDisplay::bar_text(1, 4, 1.24, 8), "kernel 1 of 4 [==>     ] 1.2 s");
  EXPECT_EQ(ProgressDisplay::bar_text(3, 4, 12.06, 8), "kernel 3 of 4 [======> ] 12.1 s");
  EXPECT_EQ(ProgressDisplay::bar_text(4, 4, 2, 8), "kernel 4 of 4 [========] 2.0 s");
}

TEST(ProgressDisplay, OnATerminalTheBarIsRedrawnInPlaceAndErasedAtTheEnd) {
  Captured c;
  {
    ProgressDisplay d = c.display(true);
    d.kernel_done(0, 3);
    c.now = 1.5;
    d.kernel_done(1, 3);
    c.now = 2.0;
    d.kernel_done(3, 3);
  }
  const std::string w0 = ProgressDisplay::bar_text(0, 3, 0), w1 = ProgressDisplay::bar_text(1, 3, 1.5);
  EXPECT_EQ(c.err, kClear + w0 + kClear + w1 + kClear);
  EXPECT_NE(w1.find("kernel 1 of 3"), std::string::npos);
  EXPECT_NE(w1.find("1.5 s"), std::string::npos);
  EXPECT_EQ(c.err.find('\n'), std::string::npos);  // one line, never scrolled
  EXPECT_EQ(c.out, "");
}

TEST(ProgressDisplay, ATickRedrawsTheTimeWhileAKernelCompilesAndNothingOtherwise) {
  Captured c;
  ProgressDisplay d = c.display(true);
  d.tick();  // nothing shown yet
  EXPECT_EQ(c.err, "");
  d.kernel_done(1, 3);
  c.now = 2.3;
  d.tick();  // one long kernel: the time moves without a kernel_done
  EXPECT_EQ(c.err, kClear + ProgressDisplay::bar_text(1, 3, 0) + kClear + ProgressDisplay::bar_text(1, 3, 2.3));
  d.kernel_done(3, 3);
  const std::string erased = c.err;
  d.tick();  // erased at the end: a tick draws nothing again
  EXPECT_EQ(c.err, erased);
}

TEST(ProgressDisplay, OnATerminalAPlainLineGoesAboveTheBar) {
  Captured c;
  ProgressDisplay d = c.display(true);
  d.kernel_done(1, 2);
  d.line("  compiled k0 (1/2, 0.50 s)");
  EXPECT_EQ(c.out, "  compiled k0 (1/2, 0.50 s)\n");
  const std::string bar = ProgressDisplay::bar_text(1, 2, 0);
  EXPECT_EQ(c.err, kClear + bar + kClear + kClear + bar);  // drawn, erased for the line, drawn again
}

TEST(ProgressDisplay, ABarLeftShowingIsErasedWhenTheDisplayGoes) {
  Captured c;
  {
    ProgressDisplay d = c.display(true);
    d.kernel_done(1, 5);  // e.g. a compile error: the error line must start clean
  }
  EXPECT_EQ(c.err, kClear + ProgressDisplay::bar_text(1, 5, 0) + kClear);
}

TEST(ProgressDisplay, NotOnATerminalKernelsDrawNothingAndLinesArePlain) {
  Captured c;
  {
    ProgressDisplay d = c.display(false);
    d.kernel_done(0, 2);
    d.kernel_done(1, 2);
    d.line("  compiling 2 Halide kernels on 2 workers");
    d.kernel_done(2, 2);
  }
  EXPECT_EQ(c.err, "");
  EXPECT_EQ(c.out, "  compiling 2 Halide kernels on 2 workers\n");
}

}  // namespace
}  // namespace disco
