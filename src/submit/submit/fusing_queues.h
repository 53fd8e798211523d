// The device's fusing queues, copied under the device's lock: the list only grows, and each
// QueueFusion lives until vkDestroyDevice. (QueueState::fusion itself is read only by the
// thread that submits to its queue.) The first kSmall are also published lock-free
// (DeviceState::fusing_fast), so that every fence wait and status query on a device of few
// queues reads them without the device's lock.
#pragma once

#include "state/object_state.h"

#include <mutex>
#include <vector>

namespace slipstream::submit {

class FusingQueues {
public:
    explicit FusingQueues(DeviceState& d) {
        n_ = d.fusing_fast_count.load(std::memory_order_acquire);
        if (n_ <= kSmall) {
            for (size_t i = 0; i < n_; ++i) small_[i] = d.fusing_fast[i].load(std::memory_order_relaxed);
            return;
        }
        std::lock_guard lock(d.mutex);
        n_ = d.fusing_queues.size();
        many_ = d.fusing_queues;
    }
    size_t size() const { return n_; }
    QueueFusion* operator[](size_t i) const { return n_ <= kSmall ? small_[i] : many_[i]; }

private:
    static constexpr size_t kSmall = DeviceState::kFusingFast;
    size_t n_ = 0;
    QueueFusion* small_[kSmall] = {};
    std::vector<QueueFusion*> many_;
};

}  // namespace slipstream::submit
