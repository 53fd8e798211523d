// Per-device counters, and the report printed at vkDestroyDevice (or at exit for devices the
// application never destroys) when VK_SLIPSTREAM_STATS / VK_SLIPSTREAM_STATS_FILE ask for it.
#pragma once

#include "command_table.h"
#include "core/settings.h"

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace slipstream {

// Add a counter: one enum value and one name, in the same place.
#define SLIPSTREAM_COUNTERS(X)                                                          \
    X(QueueSubmits, "queue_submits")            /* vkQueueSubmit / vkQueueSubmit2 calls */ \
    X(SubmitBatches, "submit_batches")          /* VkSubmitInfo(2) entries */               \
    X(CommandBuffersSubmitted, "command_buffers_submitted")                                 \
    X(CommandBuffersBegun, "command_buffers_begun")                                         \
    X(FenceWaits, "fence_waits")                /* vkWaitForFences calls */                 \
    X(SemaphoreWaits, "semaphore_waits")        /* vkWaitSemaphores calls */                \
    X(QueueWaitIdles, "queue_wait_idles")                                                   \
    X(DeviceWaitIdles, "device_wait_idles")                                                 \
    X(SpinWaits, "spin_waits")                  /* waits that polled before blocking */     \
    X(SpinWins, "spin_wins")                    /* ... and were done within the budget */   \
    X(SpinBlocked, "spin_blocked")              /* ... and then blocked in the driver */    \
    X(SpinSkipped, "spin_skipped")              /* waits the adaptive budget let block */   \
    X(SpinNs, "spin_ns")                        /* CPU time spent polling */                \
    X(IdleShortcuts, "idle_shortcuts")          /* idle waits seen idle at the first look */ \
    X(IdleDriverWaits, "idle_driver_waits")     /* ... or after a spin, ended in the driver's (semaphores) */ \
    X(FenceShortcuts, "fence_shortcuts")        /* fence waits on fences known signaled */   \
    X(EarlyTimeouts, "early_timeouts")          /* driver VK_TIMEOUTs before the timeout */  \
    X(ReadbackRedirects, "readback_redirects")  /* allocations moved to cached memory */     \
    X(ReadbackBytes, "readback_bytes")          /* ... and their bytes */                     \
    X(ReadbackFallbacks, "readback_fallbacks")  /* preferred heap full: the app's own type */ \
    X(ReadbackBindMismatches, "readback_bind_mismatches") /* must stay 0: docs/guarantees.md */    \
    X(ReadbackSteered, "readback_steered")      /* requirements reported without uncached types */ \
    X(ReadbackDeferredAllocations, "readback_deferred_allocations") /* undecided until their first use */ \
    X(ReadbackDeferredBinds, "readback_deferred_binds") /* buffer binds held until that use */ \
    X(ReadbackDeferredMoves, "readback_deferred_moves") /* moved by a first transfer write (in redirects too) */ \
    X(ReadbackDeferredKept, "readback_deferred_kept")   /* kept by another first use */ \
    X(ReadbackMovedGpuReads, "readback_moved_gpu_reads") /* moved memory the GPU read later: warned */ \
    X(ReadbackDeferralStopped, "readback_deferral_stopped") /* unknown command or sparse resource */ \
    X(ReadbackTwinsAllocated, "readback_twins_allocated") /* cached twins of moved memory */ \
    X(ReadbackTwinsFreed, "readback_twins_freed")       /* ... freed with their memory */ \
    X(OwnFencesCreated, "own_fences_created")   /* fences Slipstream created (queue idleness) */ \
    X(OwnFencesDestroyed, "own_fences_destroyed")  /* ... and destroyed: equal after vkDestroyDevice */ \
    X(ProbeObjectsCreated, "probe_objects_created")  /* buffers/images the readback probe created */ \
    X(ProbeObjectsDestroyed, "probe_objects_destroyed")  /* ... and destroyed */ \
    X(FusionDisabledUnknownCommands, "fusion_disabled_unknown_commands") /* vkCmd* names unknown to us */ \
    X(CommandBuffersCaptured, "command_buffers_captured")   /* ended with a complete capture */     \
    X(CommandBuffersNotCapturable, "command_buffers_not_capturable") /* ended, capture stopped */ \
    X(CommandBuffersBatchSized, "command_buffers_batch_sized") /* ... at more operations than a batch holds */ \
    X(DriverSubmits, "driver_submits")          /* vkQueueSubmit(2) calls Slipstream made below */ \
    X(CommandBuffersFused, "command_buffers_fused")  /* replayed into a batch of ours */          \
    X(CommandBuffersDirect, "command_buffers_direct") /* fusable, but the GPU was idle: as recorded */ \
    X(BatchCommandBuffers, "batch_command_buffers")  /* in the batches submitted (÷ batches_flushed) */ \
    X(PassedNotCaptured, "passed_not_captured") /* submitted as they are: no complete capture */ \
    X(SemaphoreSubmitsFused, "semaphore_submits_fused") /* submissions with semaphore waits or signals fused */ \
    X(SemaphoreWaitsCarried, "semaphore_waits_carried") /* waits not yet met that a fused batch waits for */ \
    X(SemaphoreWaitsReached, "semaphore_waits_reached") /* waits already met that a fused batch names all the same */ \
    X(BinarySemaphoresPaired, "binary_semaphores_paired") /* binary signal + wait pairs inside one batch, both dropped */ \
    X(SemaphoreSplits, "semaphore_splits") /* open batches submitted early: a carried wait or its signal came next */ \
    X(PassedSemaphores, "passed_semaphores")    /* ... the submit waits on or signals semaphores */ \
    X(PassedSubmitExtension, "passed_submit_extension") /* ... pNext, flags or device masks */ \
    X(PassedOtherFamily, "passed_other_family") /* ... recorded for another queue family */ \
    X(PassedLayoutsDestroyed, "passed_layouts_destroyed") /* ... a layout it names may be gone */ \
    X(BatchesFlushed, "batches_flushed")        /* fused batches submitted */                \
    X(FlushFull, "flush_full")                  /* ... because it was full */                \
    X(FlushGpuStarving, "flush_gpu_starving")   /* ... at most one batch was still running */ \
    X(FlushObserve, "flush_observe")            /* ... before a wait, query or status */       \
    X(FlushDeadline, "flush_deadline")          /* ... by the deadline flusher */              \
    X(FlushPassThrough, "flush_pass_through")   /* ... before work fusion passes through */    \
    X(FlushDestroy, "flush_destroy")            /* ... at vkDestroyDevice */                  \
    X(BatchFallbacks, "batch_fallbacks")        /* batches that failed: the app's own submitted */ \
    X(FencesAnswered, "fences_answered")        /* app fences answered from a batch's timeline */ \
    X(FenceSubmits, "fence_submits")            /* empty submissions that signal an app fence */ \
    X(SubmitsFollowedByFence, "submits_followed_by_fence") /* latency-path submissions with no timeline signal */ \
    X(LazyRecorded, "lazy_recorded")            /* command buffers begun without the driver */ \
    X(LazyMadeNative, "lazy_made_native")       /* ... recorded natively at a command we cannot capture */ \
    X(LazyReplayedAlone, "lazy_replayed_alone") /* ... replayed on their own for a pass-through submit */ \
    X(RecordedAtEnd, "recorded_at_end")         /* ... recorded natively at vkEndCommandBuffer (latency mode) */ \
    X(LayoutDestroysPutOff, "layout_destroys_put_off") /* layouts/templates kept for lazy captures */ \
    X(FuseBarriersLeftOut, "fuse_barriers_left_out") /* the command buffer opened with one that holds it */ \
    X(FuseBarriersElided, "fuse_barriers_elided") /* its memory provably meets no write of those before */ \
    X(FuseBarriersAfterWait, "fuse_barriers_after_wait") /* a batch's first, after the app saw all before it done */ \
    X(BarriersSeen, "barriers_seen")            /* pipeline barriers, event sets and waits replayed into batches */ \
    X(BarriersNarrowed, "barriers_narrowed")    /* ... their ALL_COMMANDS narrowed */ \
    X(EventSetsNarrowed, "event_sets_narrowed") /* ... of them vkCmdSetEvent2s (their infos, as the waits') */ \
    X(EventWaitsNarrowed, "event_waits_narrowed") /* ... of them event waits */ \
    X(FullBarriersInserted, "full_barriers_inserted") /* ours, around narrowed ones (the queue's other work) */ \
    X(TrailingBarriersOwed, "trailing_barriers_owed") /* batches with narrowed barriers ended without ours */ \
    X(TrailingBarriersSubmitted, "trailing_barriers_submitted") /* ... paid by a submission of only it */ \
    X(BindsLeftOut, "binds_left_out")           /* pipeline and set binds the batch already had */ \
    X(FencesPooled, "fences_pooled")            /* vkCreateFence served from the object pool */ \
    X(FencesPoolMisses, "fences_pool_misses")   /* ... plain ones the pool had nothing for */ \
    X(FencesKept, "fences_kept")                /* vkDestroyFence kept in the pool */ \
    X(FencesQuarantined, "fences_quarantined")  /* ... of them unsignaled, maybe still pending */ \
    X(FencesPoolNotWorth, "fences_pool_not_worth") /* creates, destroys left to the driver: cheaper than pooling */ \
    X(AllocCacheHits, "alloc_cache_hits")       /* vkAllocateMemory served from kept memory */ \
    X(AllocCacheMisses, "alloc_cache_misses")   /* ... plain ones the cache had nothing for */ \
    X(AllocCacheKept, "alloc_cache_kept")       /* vkFreeMemory kept in the cache */ \
    X(AllocCacheBytesHeld, "alloc_cache_bytes_held") /* peak bytes kept, all heaps (a maximum, not a sum) */ \
    X(AllocCacheHeapBytesHeld, "alloc_cache_heap_bytes_held") /* peak bytes kept in one heap (what the bound limits) */ \
    X(AllocCacheTrims, "alloc_cache_trims")     /* kept allocations freed early: bound, budget, count, out of memory */ \
    X(AllocCacheRetries, "alloc_cache_retries") /* driver out-of-memory answered by a trim and a retry */ \
    X(AllocCacheNotWorth, "alloc_cache_not_worth") /* frees given to the driver: zeroing would cost more than it charged */ \
    X(AllocCacheZeroed, "alloc_cache_zeroed")   /* recycled allocations handed out zeroed (memset or GPU fill) */ \
    X(AllocCacheGpuFills, "alloc_cache_gpu_fills") /* recycled host-invisible allocations zeroed by our fill */ \
    X(AllocCacheGpuFillBytes, "alloc_cache_gpu_fill_bytes") /* ... their bytes */ \
    X(AllocCacheFillSubmits, "alloc_cache_fill_submits") /* submissions of ours ahead of the app's: fills, waits */ \
    X(AllocCacheFillWaits, "alloc_cache_fill_waits") /* ... of them a wait on another queue's fill */ \
    X(AllocCacheFillHostWaits, "alloc_cache_fill_host_waits") /* memory given back waited for its fill */ \
    X(TimelinesPooled, "timelines_pooled")      /* vkCreateSemaphore (timeline) served from the object pool */ \
    X(TimelinesPoolMisses, "timelines_pool_misses") /* ... plain ones the pool had nothing for */ \
    X(TimelinesKept, "timelines_kept")          /* vkDestroySemaphore (timeline) kept in the pool */ \
    X(TimelinesPoolNotWorth, "timelines_pool_not_worth") /* ... left to the driver: cheaper than pooling */ \
    X(ArmArmed, "arm_armed")                    /* replays submitted ahead, waiting for a host release */ \
    X(ArmReleased, "arm_released")              /* ... released by a submission of the same work */ \
    X(ArmDisarmed, "arm_disarmed")              /* ... released with their work skipped: */ \
    X(ArmDisarmedMismatch, "arm_disarmed_mismatch") /* ... the queue's next submission was other work */ \
    X(ArmDisarmedQueueCall, "arm_disarmed_queue_call") /* ... another call on the queue (idle wait, present, ...) */ \
    X(ArmDisarmedObjects, "arm_disarmed_objects") /* ... an update, destroy or free that the replay may name */ \
    X(ArmDisarmedDeadline, "arm_disarmed_deadline") /* ... nobody claimed it in time */ \
    X(ArmNotArmable, "arm_not_armable")         /* latency-path submissions whose work cannot be armed */ \
    X(NativeWaits, "native_waits")              /* resets and frees that waited for their command buffer's submission to show done */ \
    X(SubmitLockWaits, "submit_lock_waits")     /* submissions that found their queue's lock taken */ \
    X(SubmitLockWaitNs, "submit_lock_wait_ns")  /* ... and the time they waited for it */

enum class Counter : int {
#define X(id, name) id,
    SLIPSTREAM_COUNTERS(X)
#undef X
    Count
};
inline constexpr int kCounterCount = int(Counter::Count);
extern const char* const kCounterNames[kCounterCount];

// Counting costs one branch while no report asks for the counters (DESIGN.md rule 7).
class DeviceStats {
public:
    void set_enabled(bool on) { enabled_ = on; }  // before the device is shared
    bool enabled() const { return enabled_; }
    void add(Counter c, uint64_t n = 1) {
        if (enabled_) counters_[int(c)].fetch_add(n, std::memory_order_relaxed);
    }
    // For counters that report a peak: the counter becomes max(counter, v).
    void raise(Counter c, uint64_t v) {
        if (!enabled_) return;
        std::atomic<uint64_t>& a = counters_[int(c)];
        uint64_t cur = a.load(std::memory_order_relaxed);
        while (cur < v && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
        }
    }
    void add_commands(const uint32_t (&by_kind)[kCommandKindCount]) {
        if (!enabled_) return;
        for (int k = 0; k < kCommandKindCount; ++k)
            if (by_kind[k]) commands_[k].fetch_add(by_kind[k], std::memory_order_relaxed);
    }
    uint64_t get(Counter c) const { return counters_[int(c)].load(std::memory_order_relaxed); }
    uint64_t commands(CommandKind k) const { return commands_[int(k)].load(std::memory_order_relaxed); }

    // Submissions that passed through for a structure in their pNext chain fusion cannot carry,
    // by that structure's sType: the first kExtensionSlots sTypes seen get a count each, later
    // ones share the last slot's sType 0 ("others"). Returns whether `type` was seen first now.
    static constexpr int kExtensionSlots = 8;
    bool add_passed_extension(VkStructureType type, uint64_t n);
    // (sType, count) pairs with a count, in the order first seen.
    std::vector<std::pair<uint32_t, uint64_t>> passed_extensions() const;

private:
    bool enabled_ = true;
    std::atomic<uint64_t> counters_[kCounterCount] = {};
    std::atomic<uint64_t> commands_[kCommandKindCount] = {};
    std::atomic<uint32_t> extension_types_[kExtensionSlots] = {};  // 0: free (no sType is 0 here)
    std::atomic<uint64_t> extension_counts_[kExtensionSlots] = {};
};

// A plain copy of one device's counters, with what identifies the device.
struct StatsSnapshot {
    std::string device_name;
    uint32_t vendor_id = 0, device_id = 0, driver_version = 0;
    uint64_t counters[kCounterCount] = {};
    uint64_t commands[kCommandKindCount] = {};  // commands submitted, by kind
    std::vector<std::pair<uint32_t, uint64_t>> passed_extensions;  // DeviceStats::passed_extensions
    // Layer state still alive in the process once this device's was freed: a create/destroy
    // loop that leaves anything here leaks.
    uint64_t live_devices = 0, live_queues = 0, live_command_buffers = 0;
};
StatsSnapshot snapshot(const DeviceStats& stats);

std::string format_stats_text(const StatsSnapshot& s);
std::string format_stats_json(const std::vector<StatsSnapshot>& devices,
                              const std::vector<std::pair<std::string, std::string>>& settings);

// Whether the settings ask for any report (text or file), so counting is worth its cost.
inline bool stats_wanted(const Settings& s) { return s.stats || !s.stats_file.empty(); }

// Reports a device's final counters as its settings ask: text on stderr, and the JSON file
// rewritten with every device reported so far in this process under that path.
void report_device_stats(const StatsSnapshot& s, const Settings& settings);

}  // namespace slipstream
