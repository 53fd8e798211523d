// When command buffers are captured, and what stops a device from fusing: a vkCmd* handed to
// the application that Slipstream does not intercept.
#include "submit/capture_control.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

using namespace slipstream;

namespace {
struct Fixture {
    DeviceState device;
    CommandBufferState cb;
    Fixture() {
        device.settings.fuse = true;
        cb.device = &device;
    }
};
}  // namespace

TEST(CaptureControl, CapturesFromBeginToEndAndCounts) {
    Fixture f;
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    capture::begin_capture(f.cb, &info);
    ASSERT_NE(f.cb.capture, nullptr);
    EXPECT_EQ(f.cb.capture->usage(), VkCommandBufferUsageFlags(VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT));
    capture::CmdDispatch(*f.cb.capture, CommandId::CmdDispatch, 4, 1, 1);
    capture::end_capture(f.cb, VK_SUCCESS);
    EXPECT_EQ(f.device.stats.get(Counter::CommandBuffersCaptured), 1u);

    // Re-recording reuses the capture; a graphics command makes it non-capturable.
    capture::CommandCapture* same = f.cb.capture.get();
    capture::begin_capture(f.cb, &info);
    EXPECT_EQ(f.cb.capture.get(), same);
    EXPECT_EQ(f.cb.capture->size(), 0u);
    f.cb.capture->stop(CommandId::CmdDraw);
    capture::end_capture(f.cb, VK_SUCCESS);
    EXPECT_EQ(f.device.stats.get(Counter::CommandBuffersNotCapturable), 1u);
    EXPECT_EQ(f.device.stats.get(Counter::CommandBuffersCaptured), 1u);

    // Resetting the command buffer's state resets its capture.
    capture::begin_capture(f.cb, &info);
    capture::CmdDispatch(*f.cb.capture, CommandId::CmdDispatch, 4, 1, 1);
    f.cb.reset(true);
    EXPECT_EQ(f.cb.capture->size(), 0u);
    EXPECT_EQ(f.cb.capture->arena().reserved(), 0u);
}

TEST(CaptureControl, AnUnknownCommandStopsTheDeviceFromFusing) {
    Fixture f;
    capture::begin_capture(f.cb, nullptr);
    ASSERT_NE(f.cb.capture, nullptr);
    capture::note_unknown_command(f.device, "vkCmdBindDescriptorSets2KHR");  // Vulkan 1.4
    capture::note_unknown_command(f.device, "vkCmdBindDescriptorSets2KHR");  // counted once
    capture::note_unknown_command(f.device, "vkCmdPushConstants2KHR");
    EXPECT_FALSE(f.device.fusable.load());
    EXPECT_EQ(f.device.stats.get(Counter::FusionDisabledUnknownCommands), 2u);
    // The next recording is not captured, and its old capture is gone.
    capture::begin_capture(f.cb, nullptr);
    EXPECT_EQ(f.cb.capture, nullptr);
}
