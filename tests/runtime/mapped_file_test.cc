// runtime/mapped_file.h: a plan's constants file mapped instead of read and
// copied (the executor's warm start). The bytes are the file's; a write
// through the mapping stays private to the process; errors name the path.
#include "runtime/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "frontend/errors.h"

namespace disco {
namespace {

struct TempFile {
  std::string path;
  explicit TempFile(const std::string &bytes) {
    char name[] = "/tmp/disco-mapped-file-XXXXXX";
    const int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path = name;
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string read() const {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
};

TEST(MappedFile, HoldsTheFilesBytes) {
  std::string bytes(10000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  TempFile f(bytes);
  MappedFile m(f.path);
  ASSERT_EQ(m.size(), bytes.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(m.data()), m.size()), bytes);
}

TEST(MappedFile, AWriteThroughTheMappingLeavesTheFileAsItWas) {
  TempFile f("constants");
  {
    MappedFile m(f.path);
    m.data()[0] = 'X';
    EXPECT_EQ(m.data()[0], 'X');
  }
  EXPECT_EQ(f.read(), "constants");
}

TEST(MappedFile, TheBytesOutliveTheFilesName) {
  auto f = std::make_unique<TempFile>("weights");
  MappedFile m(f->path);
  f.reset();  // a --no-cache compile's folder is removed while its executor lives
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(m.data()), m.size()), "weights");
}

TEST(MappedFile, AnEmptyFileHasNoBytes) {
  TempFile f("");
  MappedFile m(f.path);
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.data(), nullptr);
}

TEST(MappedFile, AMissingFileIsAnErrorNamingIt) {
  try {
    MappedFile m("/nonexistent/disco/constants.bin");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/disco/constants.bin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace disco
