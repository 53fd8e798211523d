// The fusion trace's file (src/submit/fuse_trace.h): written whole, or an error that says why.
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

// A trace longer than stdio's buffer first fails inside an fprintf. The H200's settings run
// (Ubuntu 24.04, glibc 2.39) wrote such a trace to /dev/full without a warning while the file's
// fclose was all that was checked; here (glibc 2.36) that fclose fails too.
TEST(FuseTrace, AFullDiskIsAnErrorHoweverLongTheTrace) {
    if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
    for (uint32_t n : {0u, 10u, 100000u}) {
        FuseTrace trace("/dev/full");
        add_records(trace, n);
        EXPECT_EQ(trace.write(), ENOSPC) << n << " records";
    }
}

TEST(FuseTrace, AMissingFolderIsAnError) {
    FuseTrace trace("/tmp/slipstream-no-such-folder/x/trace.txt");
    add_records(trace, 3);
    EXPECT_EQ(trace.write(), ENOENT);
}

}  // namespace
}  // namespace slipstream::submit
