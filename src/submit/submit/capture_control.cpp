#include "submit/capture_control.h"

#include "capture/barrier_cover.h"
#include "capture/barrier_narrowing.h"
#include "capture/footprint_walk.h"
#include "capture/layout_keeper.h"
#include "core/log.h"
#include "submit/flush_policy.h"

namespace slipstream::capture {

namespace {
// The driver records everything the capture holds so far, from its begin info on.
void begin_natively(CommandBufferState& cb, const CommandCapture& capture) {
    DeviceState& d = *cb.device;
    const VkResult r = d.dispatch.BeginCommandBuffer(cb.handle, capture.begin_info());
    if (r != VK_SUCCESS) {
        // The driver never began it: it stays lazy, so that no later command reaches the
        // driver's command buffer (its capture has stopped and holds nothing), and
        // vkEndCommandBuffer returns the error.
        cb.native_error = r;
        return;
    }
    cb.lazy = false;
    capture.replay(d.dispatch, cb.handle);
}

// The capture stops at a command it cannot hold.
void make_native(void* context, const CommandCapture& capture) {
    CommandBufferState& cb = *static_cast<CommandBufferState*>(context);
    cb.device->stats.add(Counter::LazyMadeNative);
    begin_natively(cb, capture);
}

// The rest of the recording, and its end, go to the driver (the capture stays as it is).
void finish_natively(CommandBufferState& cb) {
    begin_natively(cb, *cb.capture);
    cb.capture->on_stop(nullptr, nullptr);
    // One still being recorded (submitted before vkEndCommandBuffer: a misuse) stays so, as
    // the driver alone would have it.
    if (cb.native_error == VK_SUCCESS && cb.capture->ended())
        cb.native_error = cb.device->dispatch.EndCommandBuffer(cb.handle);
}

// Lazy recording needs a device that fuses and a command buffer fusion can replay in its
// place: primary, from a pool that is not protected (fusion's own pools are not).
bool can_record_lazily(const CommandBufferState& cb) {
    const DeviceState& d = *cb.device;
    return d.settings.lazy_record != LazyRecord::Off && d.fusion && cb.level == VK_COMMAND_BUFFER_LEVEL_PRIMARY &&
           !(cb.pool_flags & VK_COMMAND_POOL_CREATE_PROTECTED_BIT) && cb.capture->capturable();
}
}  // namespace

bool begin_capture(CommandBufferState& cb, const VkCommandBufferBeginInfo* info) {
    if (!cb.device->fusable.load(std::memory_order_relaxed)) {
        cb.capture.reset();
        return false;
    }
    if (!cb.capture) cb.capture = std::make_unique<CommandCapture>();
    cb.capture->begin(cb.level, info);
    if (cb.device->resources) cb.descriptor_epoch = cb.device->resources->update_epoch();
    // A capture may be replayed after the application destroyed a layout it names (legal once
    // recorded): the layouts stay until it goes.
    if (cb.device->fusion) {
        cb.layout_epoch = cb.device->layouts.hold();
        cb.holds_layouts = true;
    } else {
        cb.layout_epoch = cb.device->layouts.epoch();
    }
    if (!can_record_lazily(cb)) return false;
    cb.lazy = true;
    cb.capture->on_stop(make_native, &cb);
    cb.device->stats.add(Counter::LazyRecorded);
    return true;
}

void record_natively(CommandBufferState& cb) {
    if (!cb.lazy || cb.native_error != VK_SUCCESS) return;
    cb.device->stats.add(Counter::LazyMadeNative);
    finish_natively(cb);
}

void end_capture(CommandBufferState& cb, VkResult result) {
    CommandCapture& c = *cb.capture;
    c.end(result);
    cb.opens_ordered = c.capturable() && opens_with_fuse_barrier(c, cb.stages & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT);
    cb.narrowable = c.capturable() && narrowable_work(c);
    if (c.capturable()) {
        cb.device->stats.add(Counter::CommandBuffersCaptured);
        DeviceState& d = *cb.device;
        if (cb.lazy && result == VK_SUCCESS && d.settings.lazy_record == LazyRecord::Auto &&
            d.latency_families.has(cb.queue_family)) {
            const uint32_t narrowable = cb.narrowable && d.settings.narrow_barriers
                                            ? count_narrowable_barriers(c, cb.stages & VK_PIPELINE_STAGE_2_DRAW_INDIRECT_BIT,
                                                                        submit::kLatencyNarrowMin)
                                            : 0;
            if (submit::record_at_end(true, narrowable)) {
                d.stats.add(Counter::RecordedAtEnd);
                finish_natively(cb);
            }
        }
        return;
    }
    cb.device->stats.add(Counter::CommandBuffersNotCapturable);
    if (c.stop_reason() == StopReason::BatchSized) cb.device->stats.add(Counter::CommandBuffersBatchSized);
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

const Footprint& footprint_for(const CommandBufferState& cb, Footprint& scratch) {
    static const Footprint unknown = Footprint::make_unknown();
    const ResourceRegistry* registry = cb.device->resources.get();
    if (!registry || !cb.narrowable || !cb.capture) return unknown;
    CommandCapture& c = *cb.capture;
    if (c.footprint_state.load(std::memory_order_acquire) == 2) return c.footprint;
    const bool trust = cb.device->settings.elide_proof == ElideProof::TrustUnknown;
    uint8_t none = 0;
    if (c.footprint_state.compare_exchange_strong(none, 1, std::memory_order_acquire)) {
        footprint_of(c, *registry, cb.descriptor_epoch, trust, c.footprint);
        c.footprint_state.store(2, std::memory_order_release);
        return c.footprint;
    }
    // Another queue's flusher is computing it (a command buffer of simultaneous use, fused on
    // two queues at once): computed again here rather than waited for.
    footprint_of(c, *registry, cb.descriptor_epoch, trust, scratch);
    return scratch;
}

}  // namespace slipstream::capture
