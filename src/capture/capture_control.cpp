#include "capture/capture_control.h"

#include "core/log.h"

namespace slipstream::capture {

void begin_capture(CommandBufferState& cb, const VkCommandBufferBeginInfo* info) {
    if (!cb.device->fusable.load(std::memory_order_relaxed)) {
        cb.capture.reset();
        return;
    }
    if (!cb.capture) cb.capture = std::make_unique<CommandCapture>();
    cb.layout_epoch = cb.device->layout_destroys.load(std::memory_order_acquire);
    cb.capture->begin(cb.level, info);
}

void end_capture(CommandBufferState& cb, VkResult result) {
    CommandCapture& c = *cb.capture;
    c.end(result);
    if (c.capturable()) {
        cb.device->stats.add(Counter::CommandBuffersCaptured);
        return;
    }
    cb.device->stats.add(Counter::CommandBuffersNotCapturable);
    if (log_enabled(LogLevel::Debug))
        log(LogLevel::Debug, "command buffer %p not capturable: %s (%s)", static_cast<void*>(cb.handle),
            c.stopped_at(), stop_reason_name(c.stop_reason()));
}

void note_unknown_command(DeviceState& device, const char* name) {
    {
        std::lock_guard lock(device.mutex);
        if (!device.unknown_commands.insert(name).second) return;
    }
    device.fusable.store(false, std::memory_order_relaxed);
    device.stats.add(Counter::FusionDisabledUnknownCommands);
    log(LogLevel::Info,
        "%s: the application obtained %s, which Slipstream does not know (its vk.xml is %u.%u.%u): "
        "it may record commands or use queues behind Slipstream's back, so this device will not fuse",
        device.properties.deviceName, name, VK_API_VERSION_MAJOR(VK_HEADER_VERSION_COMPLETE),
        VK_API_VERSION_MINOR(VK_HEADER_VERSION_COMPLETE), VK_API_VERSION_PATCH(VK_HEADER_VERSION_COMPLETE));
}

}  // namespace slipstream::capture
