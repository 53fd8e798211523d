// The fusion trace's file (src/submit/submit/fuse_trace.h): written whole, or an error that says why.
#include "submit/fuse_trace.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>

namespace slipstream::submit {
namespace {

void add_records(FuseTrace& trace, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i)
        trace.add({1000u * i, 1u << 16, TraceEvent::Flush, FlushReason::Full, 3, 12, 2500, 1, 4000, 9000});
}

TEST(FuseTrace, WritesAHeaderAndALinePerRecord) {
    char path[] = "/tmp/slipstream-fuse-trace-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    FuseTrace trace(path);
    add_records(trace, 100);
    EXPECT_EQ(trace.write(), 0);
    std::ifstream in(path);
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) ++lines;
    EXPECT_EQ(lines, 101);
    std::remove(path);
}

// A trace longer than stdio's buffer first fails inside an fprintf, and fclose fails again
// only if something is left in the buffer: for some lengths nothing is (with these records,
// 86 is the first such length), and the H200's settings run wrote such a trace to /dev/full
// unwarned while fclose was all that was checked.
TEST(FuseTrace, AFullDiskIsAnErrorHoweverLongTheTrace) {
    if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
    for (uint32_t n = 0; n <= 600; ++n) {
        FuseTrace trace("/dev/full");
        add_records(trace, n);
        ASSERT_EQ(trace.write(), ENOSPC) << n << " records";
    }
}

TEST(FuseTrace, AMissingFolderIsAnError) {
    FuseTrace trace("/tmp/slipstream-no-such-folder/x/trace.txt");
    add_records(trace, 3);
    EXPECT_EQ(trace.write(), ENOENT);
}

}  // namespace
}  // namespace slipstream::submit
