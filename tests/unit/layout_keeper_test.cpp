// Layouts and templates destroyed while lazy captures may still be replayed with them
// (capture/layout_keeper.h): kept exactly until the last capture begun before the destroy
// goes, and destroyed once.
#include "capture/layout_keeper.h"

#include <gtest/gtest.h>

#include <vector>

using slipstream::capture::LayoutKeeper;

namespace {
std::vector<uint64_t> g_destroyed;
void destroy_pipeline_layout(VkDevice, VkPipelineLayout l, const VkAllocationCallbacks*) {
    g_destroyed.push_back(uint64_t(l));
}
void destroy_set_layout(VkDevice, VkDescriptorSetLayout l, const VkAllocationCallbacks*) {
    g_destroyed.push_back(uint64_t(l));
}
LayoutKeeper::Destroyers destroyers() { return {destroy_pipeline_layout, destroy_set_layout, nullptr, nullptr}; }
VkDevice device() { return reinterpret_cast<VkDevice>(uintptr_t(1)); }
}  // namespace

TEST(LayoutKeeper, DestroysAtOnceWithoutLiveCaptures) {
    g_destroyed.clear();
    LayoutKeeper k;
    k.destroy(device(), destroyers(), LayoutKeeper::Kind::PipelineLayout, 10, nullptr);
    EXPECT_EQ(g_destroyed, std::vector<uint64_t>{10});
    EXPECT_EQ(k.kept(), 0u);
    EXPECT_EQ(k.epoch(), 1u);
}

TEST(LayoutKeeper, KeepsUntilTheLastOlderCaptureGoes) {
    g_destroyed.clear();
    LayoutKeeper k;
    const uint64_t a = k.hold(), b = k.hold();
    k.destroy(device(), destroyers(), LayoutKeeper::Kind::PipelineLayout, 10, nullptr);
    const uint64_t c = k.hold();  // begun after the destroy: cannot name it
    EXPECT_TRUE(g_destroyed.empty());
    EXPECT_EQ(k.kept(), 1u);
    k.release(a);
    EXPECT_TRUE(g_destroyed.empty());
    k.release(b);
    EXPECT_EQ(g_destroyed, std::vector<uint64_t>{10});
    k.release(c);
    EXPECT_EQ(g_destroyed.size(), 1u);
}

TEST(LayoutKeeper, EachDestroyWaitsForItsOwnEpoch) {
    g_destroyed.clear();
    LayoutKeeper k;
    const uint64_t a = k.hold();
    k.destroy(device(), destroyers(), LayoutKeeper::Kind::SetLayout, 20, nullptr);
    const uint64_t b = k.hold();
    k.destroy(device(), destroyers(), LayoutKeeper::Kind::PipelineLayout, 21, nullptr);
    k.release(b);  // 21 still waits for a, which is older
    EXPECT_TRUE(g_destroyed.empty());
    k.release(a);
    EXPECT_EQ(g_destroyed.size(), 2u);
}

TEST(LayoutKeeper, DestroyAllAtDeviceDestroy) {
    g_destroyed.clear();
    LayoutKeeper k;
    const uint64_t a = k.hold();
    k.destroy(device(), destroyers(), LayoutKeeper::Kind::PipelineLayout, 30, nullptr);
    k.destroy_all();
    EXPECT_EQ(g_destroyed, std::vector<uint64_t>{30});
    k.release(a);  // after the device's end: nothing more
    EXPECT_EQ(g_destroyed.size(), 1u);
}
